// The host programs of the Intel backends: NAME_host.cpp (the CM kernel
// through Level Zero on an Intel GPU), NAME_emu.cpp (the CM kernel on Pulse's
// CPU emulation of CM) and NAME_opencl_host.cpp (the OpenCL kernel through
// the OpenCL API), which share their buffers, inputs, reference run and
// comparison (HostParts).
#include "codegen/CodeGenCM.h"
#include "codegen/CodeGenOpenCL.h"

#include <sstream>

#include "codegen/CmArguments.h"
#include "codegen/CodeGenC.h"
#include "ir/Target.h"

extern const char *const pulse_cm_host_helpers_text;  // runtime/emitted/cm_host_helpers.h (EmbedFile.cmake)

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Declarations shared by the host program and the emulation harness: buffers
/// sized from the layout functions of the emitted reference (dense, first
/// dimension innermost), random inputs, poisoned outputs, the thread count,
/// the reference run and the comparison.
struct HostParts {
    std::string setup, check;
};

HostParts host_parts(const kir::Kernel &k) {
    const std::string &name = k.name;
    std::ostringstream s;
    s << "    // Buffers: dense regions from " << name << "_BUFFER_region; inputs random and never zero,\n"
         "    // outputs poisoned, so an element the kernel never writes is a mismatch.\n";
    s << "    std::mt19937 rng(seed);\n";
    for (const kir::BufferArg &b : k.buffers) {
        std::string T = c_type(b.type);
        s << "    int64_t " << b.name << "_count = 1;\n";
        s << "    int64_t " << b.name << "_min[" << b.dimensions << "], " << b.name << "_extent[" << b.dimensions << "], " << b.name
          << "_stride[" << b.dimensions << "];\n";
        s << "    for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) {\n";
        s << "        " << name << "_" << b.name << "_region(pulse_d, instances, &" << b.name << "_min[pulse_d], &" << b.name << "_extent[pulse_d]);\n";
        s << "        " << b.name << "_stride[pulse_d] = " << b.name << "_count;\n";
        s << "        " << b.name << "_count *= " << b.name << "_extent[pulse_d];\n    }\n";
        if (b.is_output) {
            s << "    std::vector<" << T << "> " << b.name << "(" << b.name << "_count, poison<" << T << ">()), " << b.name
              << "_expected(" << b.name << "_count, poison<" << T << ">());\n";
        } else {
            s << "    std::vector<" << T << "> " << b.name << "(" << b.name << "_count);\n";
            s << "    for (auto &v : " << b.name << ") v = (" << T << ")random_nonzero(rng, " << (b.type.is_float() ? "true" : "false")
              << ");\n";
        }
    }
    s << "    " << name << "_reference(";
    for (const kir::BufferArg &b : k.buffers) s << b.name << (b.is_output ? "_expected" : "") << ".data(), ";
    s << "instances);\n";
    // The thread count: the kernel IR's warp count over the output extents.
    CPrinterHooks hooks;
    hooks.variable = [&](const std::string &v) -> std::string {
        std::string f = cm_field_argument(k, v);
        internal_assert(!f.empty(), "CM backend: the thread count depends on ", v);
        size_t digits = f.find_last_not_of("0123456789") + 1;
        return f.substr(0, digits) + "[" + f.substr(digits) + "]";
    };
    hooks.call = [](const Call *op, const std::vector<std::string> &) -> std::string {
        internal_error("CM backend: the thread count calls ", Expr(op));
    };
    s << "    // One thread per warp of the kernel IR.\n";
    s << "    const int64_t warps = " << print_c_expr(k.warp_count(), hooks) << ";\n";
    HostParts parts;
    parts.setup = s.str();
    std::ostringstream c;
    c << "    bool ok = true;\n";
    for (const kir::BufferArg &b : k.buffers) {
        if (b.is_output) c << "    if (ok) ok = compare(\"" << b.name << "\", " << b.name << ", " << b.name << "_expected);\n";
    }
    c << "    if (ok) std::printf(\"PASS\\n\");\n";
    c << "    return ok ? 0 : 1;\n";
    parts.check = c.str();
    return parts;
}

std::string host_helpers() { return pulse_cm_host_helpers_text; }

/// How a host program's CHECK macro tests an API call's result.
struct ApiCheck {
    const char *macro, *result_type, *success, *format, *print_as;
};

/// A host program on a GPU API up to `main`: the API's headers, the
/// standard ones, the reference, a CHECK macro that exits with status 2 on
/// an error result, and the shared helpers.
std::string device_host_preamble(const std::string &name, const std::string &api_headers, const ApiCheck &check) {
    std::ostringstream out;
    out << api_headers << "\n";
    out << "#include <algorithm>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <fstream>\n#include "
           "<iterator>\n#include <limits>\n#include <random>\n#include <string>\n#include <vector>\n\n";
    out << "#include \"" << name << "_reference.h\"\n\n";
    out << "#define " << check.macro << "(call)                                                  \\\n"
        << "    do {                                                                \\\n"
        << "        " << check.result_type << " r_ = (call);                                        \\\n"
        << "        if (r_ != " << check.success << ") {                                  \\\n"
        << "            std::fprintf(stderr, \"%s failed: " << check.format << "\\n\", #call, (" << check.print_as << ")r_); \\\n"
        << "            std::exit(2);                                               \\\n"
        << "        }                                                               \\\n"
        << "    } while (0)\n\n";
    out << host_helpers() << "\n";
    return out.str();
}

/// The calls of a host program that bind each buffer (its `bind(data,
/// bytes)`; an output's result kept as `HANDLE_TYPE NAME_device`) and set
/// each scalar argument (`SCALAR_TYPE v` passed by `set_scalar`), in the
/// kernel's argument order; returns the outputs' names.
std::vector<std::string> print_argument_binding(std::ostream &out, const kir::Kernel &k, const std::string &handle_type,
                                                const std::string &scalar_type, const std::string &set_scalar) {
    std::vector<std::string> outputs;
    for (const kir::BufferArg &b : k.buffers) {
        if (b.is_output) outputs.push_back(b.name);
        out << "    " << (b.is_output ? handle_type + b.name + "_device = " : std::string()) << "bind(" << b.name << ".data(), " << b.name
            << ".size() * sizeof(" << b.name << "[0]));\n";
    }
    for (const std::string &a : cm_host_scalar_arguments(k)) out << "    { " << scalar_type << " v = " << a << "; " << set_scalar << " }\n";
    return outputs;
}

/// `main` of a host program up to the kernel: its arguments (instances,
/// seed) and the buffers' setup.
std::string main_prologue(const std::string &name, const HostParts &parts) {
    std::ostringstream out;
    out << "int main(int argc, char **argv) {\n";
    out << "    int64_t instances = argc > 1 ? std::atoll(argv[1]) : 0;\n";
    out << "    if (instances <= 0) instances = " << name << "_default_instances();\n";
    out << "    unsigned seed = argc > 2 ? (unsigned)std::atoi(argv[2]) : 1u;\n";
    out << parts.setup;
    return out.str();
}

}  // namespace

std::string print_cm_emulation_harness(const kir::Kernel &k) {
    const std::string &name = k.name;
    HostParts parts = host_parts(k);
    std::ostringstream out;
    out << "// " << name << "_emu.cpp: runs the CM kernel " << name << "_genx.cpp on Pulse's CPU emulation of CM\n"
        << "// and compares it with the emitted reference. " << generated_by() << ".\n"
        << "// usage: " << name << "_emu [instances (0: the spec's) [seed]]\n";
    out << "#include <algorithm>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <limits>\n#include <random>\n#include "
           "<vector>\n\n";
    out << "#include \"" << name << "_genx.cpp\"\n#include \"" << name << "_reference.h\"\n\n";
    out << host_helpers() << "\n";
    out << main_prologue(name, parts);
    out << "    // The kernel, thread by thread, one thread per group.\n";
    out << "    cm_emu::unbind_all();\n";
    std::vector<std::string> args;
    for (const kir::BufferArg &b : k.buffers) {
        out << "    SurfaceIndex surf_" << b.name << " = cm_emu::bind_buffer(" << b.name << ".data(), " << b.name << ".size() * sizeof("
            << b.name << "[0]));\n";
        args.push_back("surf_" + b.name);
    }
    for (const std::string &a : cm_host_scalar_arguments(k)) args.push_back(a);
    out << "    const uint groups[3] = {(uint)warps, 1, 1}, local[3] = {1, 1, 1};\n";
    out << "    if (warps > 0) cm_emu::launch(groups, local, [&] { " << name << "(";
    for (size_t i = 0; i < args.size(); i++) out << (i ? ", " : "") << args[i];
    out << "); });\n";
    out << parts.check << "}\n";
    return out.str();
}

std::string print_cm_host(const kir::Kernel &k) {
    const std::string &name = k.name;
    HostParts parts = host_parts(k);
    std::ostringstream out;
    out << "// " << name << "_host.cpp: runs the CM kernel " << name << "_genx.cpp on an Intel GPU through\n"
        << "// Level Zero and checks it against the emitted reference. " << generated_by() << ".\n//\n"
        << "// Build (see docs/backends.md, \"CM\"):\n"
        << "//   cmc -march=<GPU, e.g. SKL or DG2> -fcmocl -emit-spirv " << name << "_genx.cpp -o " << name << "_genx.spv\n"
        << "//   c++ -std=c++17 -O2 " << name << "_host.cpp -lze_loader -o " << name << "_host\n"
        << "//   ./" << name << "_host [instances [seed]]    (reads " << name << "_genx.spv from the current directory)\n";
    out << device_host_preamble(name, "#include <level_zero/ze_api.h>\n", {"ZE_CHECK", "ze_result_t", "ZE_RESULT_SUCCESS", "0x%x", "unsigned"});
    out << main_prologue(name, parts);
    out << R"(    // The first GPU of the first driver.
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver;
    ZE_CHECK(zeDriverGet(&count, &driver));
    count = 1;
    ze_device_handle_t device;
    ZE_CHECK(zeDeviceGet(driver, &count, &device));
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t context;
    ZE_CHECK(zeContextCreate(driver, &context_desc, &context));
    // The kernel: SPIR-V from cmc -fcmocl -emit-spirv, finished by the driver's
    // vector-compute back end (-vc-codegen).
)";
    out << "    std::ifstream spv_file(\"" << name << "_genx.spv\", std::ios::binary);\n";
    out << "    if (!spv_file) { std::fprintf(stderr, \"cannot open " << name << "_genx.spv\\n\"); return 2; }\n";
    out << R"(    std::vector<char> spv((std::istreambuf_iterator<char>(spv_file)), std::istreambuf_iterator<char>());
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC};
    module_desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    module_desc.inputSize = spv.size();
    module_desc.pInputModule = reinterpret_cast<const uint8_t *>(spv.data());
    module_desc.pBuildFlags = "-vc-codegen";
    ze_module_handle_t module;
    ZE_CHECK(zeModuleCreate(context, device, &module_desc, &module, nullptr));
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC};
)";
    out << "    kernel_desc.pKernelName = \"" << name << "\";\n";
    out << R"(    ze_kernel_handle_t kernel;
    ZE_CHECK(zeKernelCreate(module, &kernel_desc, &kernel));
    // Buffers: shared allocations, passed to the kernel's SurfaceIndex arguments.
    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    uint32_t arg = 0;
    std::vector<void *> allocations;
    auto bind = [&](void *data, size_t bytes) {
        void *p = nullptr;
        ZE_CHECK(zeMemAllocShared(context, &device_desc, &host_desc, bytes, 64, device, &p));
        std::memcpy(p, data, bytes);
        ZE_CHECK(zeKernelSetArgumentValue(kernel, arg++, sizeof(p), &p));
        allocations.push_back(p);
        return p;
    };
)";
    const std::vector<std::string> outputs =
        print_argument_binding(out, k, "void *", "int", "ZE_CHECK(zeKernelSetArgumentValue(kernel, arg++, sizeof(v), &v));");
    out << "    // One thread per warp of the kernel IR, one per group.\n";
    out << "    if (warps <= 0) { std::fprintf(stderr, \"no threads to run\\n\"); return 2; }\n";
    out << "    const int64_t threads = warps, per_group = 1;\n";
    out << R"(    ZE_CHECK(zeKernelSetGroupSize(kernel, (uint32_t)per_group, 1, 1));
    ze_group_count_t groups = {(uint32_t)((threads + per_group - 1) / per_group), 1, 1};
    ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    queue_desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    ze_command_list_handle_t list;
    ZE_CHECK(zeCommandListCreateImmediate(context, device, &queue_desc, &list));
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, kernel, &groups, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListHostSynchronize(list, UINT64_MAX));
)";
    for (const std::string &o : outputs) {
        out << "    std::memcpy(" << o << ".data(), " << o << "_device, " << o << ".size() * sizeof(" << o << "[0]));\n";
    }
    out << R"(    for (void *a : allocations) zeMemFree(context, a);
    zeCommandListDestroy(list);
    zeKernelDestroy(kernel);
    zeModuleDestroy(module);
    zeContextDestroy(context);
)";
    out << parts.check << "}\n";
    return out.str();
}

std::string print_opencl_host(const kir::Kernel &k) {
    const std::string &name = k.name;
    HostParts parts = host_parts(k);
    std::ostringstream out;
    out << "// " << name << "_opencl_host.cpp: runs the OpenCL kernel " << name << ".cl on the first GPU of the\n"
        << "// first OpenCL platform that has one and checks it against the emitted reference. " << generated_by() << ".\n//\n"
        << "// Build and run (docs/backends.md, \"OpenCL\"; Debian: ocl-icd-opencl-dev, intel-opencl-icd):\n"
        << "//   c++ -std=c++17 -O2 " << name << "_opencl_host.cpp -lOpenCL -o " << name << "_opencl_host\n"
        << "//   ./" << name << "_opencl_host [instances [seed]]    (reads " << name << ".cl from the current directory)\n";
    out << device_host_preamble(name, "#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl.h>\n#include <CL/cl_ext.h>\n",
                                {"CL_CHECK", "cl_int", "CL_SUCCESS", "%d", "int"});
    out << main_prologue(name, parts);
    out << R"(    // The first GPU of the first platform that has one.
    cl_uint platforms = 0;
    if (clGetPlatformIDs(0, nullptr, &platforms) != CL_SUCCESS) platforms = 0;  // none installed
    std::vector<cl_platform_id> platform(platforms);
    if (platforms > 0) CL_CHECK(clGetPlatformIDs(platforms, platform.data(), nullptr));
    cl_device_id device = nullptr;
    for (cl_platform_id p : platform) {
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &device, nullptr) == CL_SUCCESS) break;
        device = nullptr;
    }
    if (!device) { std::fprintf(stderr, "no OpenCL GPU (install the device's OpenCL runtime, e.g. intel-opencl-icd)\n"); return 2; }
    cl_int error = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
    CL_CHECK(error);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &error);
    CL_CHECK(error);
    // The kernel from source; a device whose least sub-group size is 16 (pvc) gets it.
    size_t sizes_bytes = 0;
    std::string options;
    if (clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, 0, nullptr, &sizes_bytes) == CL_SUCCESS && sizes_bytes > 0) {
        std::vector<size_t> sizes(sizes_bytes / sizeof(size_t));
        CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizes_bytes, sizes.data(), nullptr));
        options = "-DPULSE_MIN_SUB_GROUP_SIZE=" + std::to_string(*std::min_element(sizes.begin(), sizes.end()));
    }
)";
    out << "    std::ifstream cl_file(\"" << name << ".cl\");\n";
    out << "    if (!cl_file) { std::fprintf(stderr, \"cannot open " << name << ".cl\\n\"); return 2; }\n";
    out << R"(    const std::string text((std::istreambuf_iterator<char>(cl_file)), std::istreambuf_iterator<char>());
    const char *text_pointer = text.c_str();
    cl_program program = clCreateProgramWithSource(context, 1, &text_pointer, nullptr, &error);
    CL_CHECK(error);
    if (clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
        size_t log_bytes = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_bytes);
        std::string log(log_bytes, '\0');
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log_bytes, &log[0], nullptr);
        std::fprintf(stderr, "the kernel does not build:\n%s\n", log.c_str());
        return 2;
    }
)";
    out << "    cl_kernel kernel = clCreateKernel(program, \"" << name << "\", &error);\n    CL_CHECK(error);\n";
    out << R"(    // Buffers: copied in, one kernel argument each; then the scalars.
    cl_uint arg = 0;
    std::vector<cl_mem> allocations;
    auto bind = [&](void *data, size_t bytes) {
        cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, std::max<size_t>(bytes, 1), data, &error);
        CL_CHECK(error);
        CL_CHECK(clSetKernelArg(kernel, arg++, sizeof(m), &m));
        allocations.push_back(m);
        return m;
    };
)";
    const std::vector<std::string> outputs =
        print_argument_binding(out, k, "cl_mem ", "cl_int", "CL_CHECK(clSetKernelArg(kernel, arg++, sizeof(v), &v));");
    out << R"(    // One sub-group per warp of the kernel IR, one sub-group per work-group.
    if (warps <= 0) { std::fprintf(stderr, "no sub-groups to run\n"); return 2; }
    size_t sub_group = 0;
    {
        const size_t local_guess = 32;
        CL_CHECK(clGetKernelSubGroupInfo(kernel, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof(local_guess), &local_guess,
                                         sizeof(sub_group), &sub_group, nullptr));
    }
    const size_t local = sub_group, global = (size_t)warps * sub_group;
    CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
)";
    for (const std::string &o : outputs) {
        out << "    CL_CHECK(clEnqueueReadBuffer(queue, " << o << "_device, CL_TRUE, 0, " << o << ".size() * sizeof(" << o << "[0]), " << o
            << ".data(), 0, nullptr, nullptr));\n";
    }
    out << R"(    for (cl_mem m : allocations) clReleaseMemObject(m);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
)";
    out << parts.check << "}\n";
    return out.str();
}

}  // namespace pulse
