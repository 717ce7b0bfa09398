// The nearest lane lane - k*dp (k >= 0) whose bit is set in `sources`, or -1.
[[maybe_unused]] static __device__ __forceinline__ int pulse_chain_source(unsigned sources, int lane, int dp) {
    for (int k = lane; k >= 0 && k < 32; k -= dp) {
        if (sources & (1u << k)) return k;
    }
    return -1;
}
