// An opt-14 pass plugin that finishes the LLVM IR of a CM kernel compiled by
// stock clang against runtime/cm_vc/cm/cm.h, so that it has the form Intel's
// CM compiler gives IGC's vector-compute (VC) backend:
//
//   pulse-genx-lower        the header's placeholders become genx intrinsics:
//                           regions (pulse.vc.region.*) rdregion / wrregion,
//                           scattered accesses (pulse.vc.gather.*,
//                           pulse.vc.scatter.*) the dataport intrinsics, whose
//                           i1 masks clang 14 cannot spell;
//   pulse-genx-kernels      functions annotated "pulse_genx_main" (the header's
//                           _GENX_MAIN_) become CM kernels: the CMGenxMain
//                           attribute and a !genx.kernels entry whose argument
//                           kinds say which arguments are surfaces; `freeze`
//                           goes (llvm-spirv 14 has no SPIR-V for it).
//   GenXSPIRVWriterAdaptor  vc-intrinsics' pass: that metadata as the SPIR-V
//                           translator reads it.
//
// Usage (tools/IntelCompile.cpp runs the whole road):
//   opt-14 -load-pass-plugin=PulseGenX.so -passes='pulse-genx-lower,function(sroa,early-cse,instcombine,simplifycfg),
//          pulse-genx-kernels,GenXSPIRVWriterAdaptor' in.bc -o out.bc
#include <llvm/GenXIntrinsics/GenXIntrinsics.h>
#include <llvm/GenXIntrinsics/GenXMetadata.h>
#include <llvm/GenXIntrinsics/GenXSPIRVWriterAdaptor.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/raw_ostream.h>

using namespace llvm;

namespace {

/// The header's annotation of a kernel.
const char *const kKernelAnnotation = "pulse_genx_main";

/// The kind the !genx.kernels entry gives an argument (cmc's numbering).
enum ArgumentKind { General = 0, Surface = 2 };

/// Whether `value` is the surface operand of a genx memory intrinsic:
/// SurfaceIndex is a plain i32 in the header, so a kernel argument is a
/// surface where it is used as one.
bool used_as_surface(const Value &value) {
    for (const Use &use : value.uses()) {
        const auto *call = dyn_cast<CallInst>(use.getUser());
        if (!call || !call->getCalledFunction()) continue;
        switch (GenXIntrinsic::getGenXIntrinsicID(call->getCalledFunction())) {
        case GenXIntrinsic::genx_oword_ld: if (use.getOperandNo() == 1) return true; break;
        case GenXIntrinsic::genx_oword_st: if (use.getOperandNo() == 0) return true; break;
        case GenXIntrinsic::genx_gather_masked_scaled2: if (use.getOperandNo() == 2) return true; break;
        case GenXIntrinsic::genx_scatter_scaled: if (use.getOperandNo() == 3) return true; break;
        default: break;
        }
    }
    return false;
}

/// The functions the module's llvm.global.annotations mark as kernels; the
/// annotations themselves are removed (the SPIR-V translator has no use for them).
std::vector<Function *> take_kernels(Module &module) {
    std::vector<Function *> kernels;
    GlobalVariable *annotations = module.getGlobalVariable("llvm.global.annotations");
    if (!annotations) return kernels;
    if (auto *array = dyn_cast<ConstantArray>(annotations->getInitializer())) {
        for (Value *entry : array->operands()) {
            auto *fields = dyn_cast<ConstantStruct>(entry);
            if (!fields) continue;
            auto *function = dyn_cast<Function>(fields->getOperand(0)->stripPointerCasts());
            auto *text = dyn_cast<GlobalVariable>(fields->getOperand(1)->stripPointerCasts());
            auto *data = text ? dyn_cast<ConstantDataArray>(text->getInitializer()) : nullptr;
            if (function && data && data->isCString() && data->getAsCString() == kKernelAnnotation) kernels.push_back(function);
        }
    }
    SmallPtrSet<GlobalVariable *, 4> strings;
    for (Value *v : annotations->operand_values())
        if (auto *array = dyn_cast<ConstantArray>(v))
            for (Value *entry : array->operands())
                if (auto *fields = dyn_cast<ConstantStruct>(entry))
                    for (Value *field : fields->operands())
                        if (auto *g = dyn_cast<GlobalVariable>(field->stripPointerCasts())) strings.insert(g);
    annotations->eraseFromParent();
    for (GlobalVariable *g : strings) {
        g->removeDeadConstantUsers();
        if (g->use_empty()) g->eraseFromParent();
    }
    return kernels;
}

/// pulse.vc.gather.vNT(surface, global, offsets) and
/// pulse.vc.scatter.vNT(surface, global, offsets, data), offsets in elements,
/// as the genx dword scattered read and write (offsets in bytes, every lane
/// enabled), as CM's compiler lowers CM's read and write.
void lower_scattered_placeholders(Module &module) {
    std::vector<CallInst *> calls;
    for (Function &f : module) {
        if (!f.getName().startswith("pulse.vc.")) continue;
        for (User *user : f.users())
            if (auto *call = dyn_cast<CallInst>(user)) calls.push_back(call);
    }
    LLVMContext &context = module.getContext();
    Type *i32 = Type::getInt32Ty(context);
    Type *i16 = Type::getInt16Ty(context);
    for (CallInst *call : calls) {
        const bool gather = call->getCalledFunction()->getName().startswith("pulse.vc.gather.");
        IRBuilder<> b(call);
        Value *surface = call->getArgOperand(0);
        Value *global = b.CreateShl(call->getArgOperand(1), 2);
        Value *offsets = b.CreateShl(call->getArgOperand(2), 2);
        auto *offset_type = cast<FixedVectorType>(offsets->getType());
        auto *mask_type = FixedVectorType::get(Type::getInt1Ty(context), offset_type->getNumElements());
        Value *all_lanes = Constant::getAllOnesValue(mask_type);
        Value *log2_blocks = ConstantInt::get(i32, 2), *scale = ConstantInt::get(i16, 0);
        if (gather) {
            Function *f = GenXIntrinsic::getGenXDeclaration(&module, GenXIntrinsic::genx_gather_masked_scaled2,
                                                            {call->getType(), offset_type, mask_type});
            Value *value = b.CreateCall(f, {log2_blocks, scale, surface, global, offsets, all_lanes});
            call->replaceAllUsesWith(value);
        } else {
            Value *data = call->getArgOperand(3);
            Function *f = GenXIntrinsic::getGenXDeclaration(&module, GenXIntrinsic::genx_scatter_scaled,
                                                            {mask_type, offset_type, data->getType()});
            b.CreateCall(f, {all_lanes, log2_blocks, scale, surface, global, offsets, data});
        }
        call->eraseFromParent();
    }
    for (auto it = module.begin(); it != module.end();) {
        Function &f = *it++;
        if (f.getName().startswith("pulse.vc.") && f.use_empty()) f.eraseFromParent();
    }
}

/// The element type a region placeholder names by its size and kind.
Type *element_type(LLVMContext &context, int64_t bytes, bool is_float) {
    if (is_float) return bytes == 8 ? Type::getDoubleTy(context) : bytes == 2 ? Type::getHalfTy(context) : Type::getFloatTy(context);
    return Type::getIntNTy(context, (unsigned)bytes * 8);
}

/// pulse.vc.region.read(destination, parent, offset, stride, n, p, bytes,
/// is_float) and pulse.vc.region.write(parent, source, ...): N elements
/// `stride` apart from element `offset` of a vector of P, as
/// llvm.genx.rdregion / wrregion on the vectors the pointers hold (a 1-D
/// region: vertical stride 0, width N). Returns false, with a message, if a
/// size is not a constant (the header's templates make them constants).
bool lower_region_placeholders(Module &module) {
    std::vector<CallInst *> calls;
    for (Function &f : module) {
        if (f.getName() != "pulse.vc.region.read" && f.getName() != "pulse.vc.region.write") continue;
        for (User *user : f.users())
            if (auto *call = dyn_cast<CallInst>(user)) calls.push_back(call);
    }
    LLVMContext &context = module.getContext();
    Type *i32 = Type::getInt32Ty(context), *i16 = Type::getInt16Ty(context);
    for (CallInst *call : calls) {
        const bool read = call->getCalledFunction()->getName() == "pulse.vc.region.read";
        int64_t sizes[5];
        for (int i = 0; i < 5; i++) {
            auto *c = dyn_cast<ConstantInt>(call->getArgOperand(3 + i));
            if (!c) {
                errs() << "pulse-genx-lower: a region whose stride or size is not a constant: " << *call << "\n";
                return false;
            }
            sizes[i] = c->getSExtValue();
        }
        const int64_t stride = sizes[0], n = sizes[1], p = sizes[2], bytes = sizes[3];
        Type *element = element_type(context, bytes, sizes[4] != 0);
        auto *sub = FixedVectorType::get(element, (unsigned)n), *whole = FixedVectorType::get(element, (unsigned)p);
        const bool is_float = element->isFloatingPointTy();
        IRBuilder<> b(call);
        auto pointer = [&](Value *v, Type *t) { return b.CreateBitCast(v, t->getPointerTo(v->getType()->getPointerAddressSpace())); };
        Value *parent_pointer = pointer(call->getArgOperand(read ? 1 : 0), whole);
        Value *offset = b.CreateTrunc(b.CreateMul(call->getArgOperand(2), ConstantInt::get(i32, bytes)), i16);
        Value *parent = b.CreateLoad(whole, parent_pointer);
        if (read) {
            Function *f = GenXIntrinsic::getGenXDeclaration(&module, is_float ? GenXIntrinsic::genx_rdregionf : GenXIntrinsic::genx_rdregioni,
                                                            {sub, whole, i16});
            Value *region = b.CreateCall(f, {parent, ConstantInt::get(i32, 0), ConstantInt::get(i32, n), ConstantInt::get(i32, stride), offset,
                                             ConstantInt::get(i32, p)});
            b.CreateStore(region, pointer(call->getArgOperand(0), sub));
        } else {
            Value *value = b.CreateLoad(sub, pointer(call->getArgOperand(1), sub));
            Type *i1 = Type::getInt1Ty(context);
            Function *f = GenXIntrinsic::getGenXDeclaration(&module, is_float ? GenXIntrinsic::genx_wrregionf : GenXIntrinsic::genx_wrregioni,
                                                            {whole, sub, i16, i1});
            Value *updated = b.CreateCall(f, {parent, value, ConstantInt::get(i32, 0), ConstantInt::get(i32, n), ConstantInt::get(i32, stride),
                                              offset, ConstantInt::get(i32, p), ConstantInt::getTrue(context)});
            b.CreateStore(updated, parent_pointer);
        }
        call->eraseFromParent();
    }
    for (const char *name : {"pulse.vc.region.read", "pulse.vc.region.write"})
        if (Function *f = module.getFunction(name))
            if (f->use_empty()) f->eraseFromParent();
    return true;
}

/// `freeze x` as x: llvm-spirv 14 has no SPIR-V for freeze (later
/// translators do the same), and IGC has no poison to stop.
void drop_freezes(Module &module) {
    std::vector<FreezeInst *> freezes;
    for (Function &f : module)
        for (BasicBlock &block : f)
            for (Instruction &i : block)
                if (auto *freeze = dyn_cast<FreezeInst>(&i)) freezes.push_back(freeze);
    for (FreezeInst *freeze : freezes) {
        freeze->replaceAllUsesWith(freeze->getOperand(0));
        freeze->eraseFromParent();
    }
}

/// Clang calls every function, intrinsics included, with the spir_func
/// convention; intrinsics take the default one.
void use_default_convention_for_intrinsics(Module &module) {
    for (Function &f : module) {
        if (!f.getName().startswith("llvm.genx.")) continue;
        f.setCallingConv(CallingConv::C);
        for (User *user : f.users())
            if (auto *call = dyn_cast<CallInst>(user)) call->setCallingConv(CallingConv::C);
    }
}

/// The header's placeholders as genx intrinsics; SROA then makes the vectors
/// the region calls kept in memory registers again.
struct PulseGenXLower : PassInfoMixin<PulseGenXLower> {
    PreservedAnalyses run(Module &module, ModuleAnalysisManager &) {
        if (!lower_region_placeholders(module)) report_fatal_error("pulse-genx-lower: cannot lower the regions (see above)", false);
        lower_scattered_placeholders(module);
        return PreservedAnalyses::none();
    }
};

struct PulseGenXKernels : PassInfoMixin<PulseGenXKernels> {
    PreservedAnalyses run(Module &module, ModuleAnalysisManager &) {
        drop_freezes(module);
        use_default_convention_for_intrinsics(module);
        LLVMContext &context = module.getContext();
        auto i32 = [&](int v) { return ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(context), v)); };
        NamedMDNode *kernels = module.getOrInsertNamedMetadata(genx::FunctionMD::GenXKernels);
        for (Function *f : take_kernels(module)) {
            f->addFnAttr(genx::FunctionMD::CMGenXMain);
            f->setCallingConv(CallingConv::C);
            f->setLinkage(GlobalValue::ExternalLinkage);
            std::vector<Metadata *> kinds, io_kinds, descriptions;
            for (Argument &a : f->args()) {
                const bool surface = used_as_surface(a);
                kinds.push_back(i32(surface ? Surface : General));
                io_kinds.push_back(i32(0));
                descriptions.push_back(MDString::get(context, surface ? "buffer_t" : ""));
            }
            kernels->addOperand(MDNode::get(context, {ValueAsMetadata::get(f), MDString::get(context, f->getName()),
                                                      MDNode::get(context, kinds), i32(0), i32(0), MDNode::get(context, io_kinds),
                                                      MDNode::get(context, descriptions), i32(0), i32(0)}));
        }
        if (kernels->getNumOperands() == 0) {
            errs() << "pulse-genx-kernels: no function is marked _GENX_MAIN_ (annotation \"" << kKernelAnnotation << "\")\n";
        }
        return PreservedAnalyses::none();
    }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "PulseGenX", "1", [](PassBuilder &builder) {
                builder.registerPipelineParsingCallback(
                    [](StringRef name, ModulePassManager &passes, ArrayRef<PassBuilder::PipelineElement>) {
                        if (name == "pulse-genx-lower") {
                            passes.addPass(PulseGenXLower());
                            return true;
                        }
                        if (name == "pulse-genx-kernels") {
                            passes.addPass(PulseGenXKernels());
                            return true;
                        }
                        if (name == "GenXSPIRVWriterAdaptor") {
                            passes.addPass(GenXSPIRVWriterAdaptor(/*RewriteTypes=*/true, /*RewriteSingleElementVectors=*/true));
                            return true;
                        }
                        return false;
                    });
            }};
}
