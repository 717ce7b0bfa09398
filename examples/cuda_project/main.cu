// Runs the Pulse conv1d_sbm kernel (built by pulse_add_kernel) on a signal of
// about a million samples and checks it against a plain loop on the CPU.
#include <cmath>
#include <cstdio>
#include <vector>

#include "conv1d_sbm.h"
#include <pulse/pulse_cuda.h>

int main() {
    try {
        // Each array instance (one warp) produces the outputs of one 28-sample
        // block; the output extents are the problem size. The generated header
        // sizes each buffer by name for a number of instances.
        const int64_t Q = 5, instances = 1 << 15;
        const int64_t n = conv1d_sbm_Out_elements(instances);  // Out(b * C + c): the flat signal
        const int64_t nx = conv1d_sbm_x_elements(instances);   // x: what those outputs read (n + Q - 1)
        std::vector<float> x(nx), w(Q);
        for (int64_t i = 0; i < nx; i++) x[i] = std::sin(0.001f * i);
        for (int64_t q = 0; q < Q; q++) w[q] = 1.0f / (q + 1);

        pulse::cuda::DeviceBuffer<float> dx(nx), dw(Q), dout(n);
        dx.upload(x);
        dw.upload(w);
        PULSE_CUDA_CHECK(conv1d_sbm(pulse_dense_buffer(dx.data(), {nx}), pulse_dense_buffer(dw.data(), {Q}),
                                    pulse_dense_buffer(dout.data(), {n}), 0));
        PULSE_CUDA_CHECK_LAUNCH("conv1d_sbm");
        std::vector<float> out = dout.download();

        double max_err = 0;
        for (int64_t i = 0; i < n; i++) {
            double want = 0;
            for (int64_t q = 0; q < Q; q++) want += (double)x[i + q] * w[q];
            max_err = std::max(max_err, std::fabs(out[i] - want));
        }
        std::printf("%lld outputs, max abs error %.3g: %s\n", (long long)n, max_err, max_err < 1e-5 ? "ok" : "WRONG");
        return max_err < 1e-5 ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
