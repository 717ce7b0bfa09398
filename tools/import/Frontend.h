// Clang's AST of one C function -> the affine program of Model.h.
#ifndef PULSE_IMPORT_FRONTEND_H
#define PULSE_IMPORT_FRONTEND_H

#include "Model.h"

namespace clang {
class ASTContext;
class FunctionDecl;
}  // namespace clang

namespace pulse_import {

/// Fills `prog` from `f`'s parameters and body; rejects (through `diag`)
/// everything outside the accepted subset.
void build_program(clang::ASTContext &ctx, const clang::FunctionDecl *f, Diagnostics &diag, Program &prog);

}  // namespace pulse_import

#endif
