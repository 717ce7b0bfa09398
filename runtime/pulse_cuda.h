// Host helpers for programs that run Pulse's CUDA kernels: error checking,
// an owning device buffer and an event timer. Header-only, so an outside
// project (and the generated check harnesses) need nothing but this file and
// the CUDA runtime.
#ifndef PULSE_CUDA_RUNTIME_H
#define PULSE_CUDA_RUNTIME_H

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pulse {
namespace cuda {

/// Throws std::runtime_error naming the failed call, its place and CUDA's text
/// for `error`; does nothing on cudaSuccess. Use it through PULSE_CUDA_CHECK.
inline void check(cudaError_t error, const char *call, const char *file, int line) {
    if (error == cudaSuccess) return;
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                             cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
}

/// Launches are asynchronous: a bad launch shows in cudaGetLastError, a fault
/// inside the kernel only at the next synchronization. Checks both.
inline void check_launch(const char *what, const char *file, int line) {
    check(cudaGetLastError(), what, file, line);
    check(cudaDeviceSynchronize(), what, file, line);
}

/// The same for work on one stream: waits for that stream only, so other
/// streams' work (and other host threads' launches) runs on.
inline void check_stream(const char *what, cudaStream_t stream, const char *file, int line) {
    check(cudaGetLastError(), what, file, line);
    check(cudaStreamSynchronize(stream), what, file, line);
}

/// Host memory of `size` value-initialised elements of T, with the part of
/// std::vector's interface the check harnesses use; unlike std::vector<bool>,
/// it holds real bool objects, so data() is a bool * (a bool output's).
template<typename T>
class HostArray {
public:
    explicit HostArray(size_t size = 0) : elements(new T[size]()), count(size) {}
    HostArray(const HostArray &other) : HostArray(other.count) { std::copy(other.begin(), other.end(), begin()); }
    HostArray &operator=(HostArray other) {
        std::swap(elements, other.elements);
        std::swap(count, other.count);
        return *this;
    }
    T *data() { return elements.get(); }
    const T *data() const { return elements.get(); }
    size_t size() const { return count; }
    T *begin() { return data(); }
    T *end() { return data() + count; }
    const T *begin() const { return data(); }
    const T *end() const { return data() + count; }
    T &operator[](size_t i) { return elements[i]; }
    const T &operator[](size_t i) const { return elements[i]; }

private:
    std::unique_ptr<T[]> elements;
    size_t count = 0;
};

/// A device allocation of `size` elements of T, freed when it goes out of
/// scope. Movable, not copyable (two owners would free it twice).
template<typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t size) : count(size) {
        if (size > 0) check(cudaMalloc(reinterpret_cast<void **>(&pointer), size * sizeof(T)), "cudaMalloc", __FILE__, __LINE__);
    }
    ~DeviceBuffer() {
        if (pointer) cudaFree(pointer);  // no throw from a destructor; a failing free has nothing to recover
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&other) noexcept : pointer(std::exchange(other.pointer, nullptr)), count(std::exchange(other.count, 0)) {}
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
        std::swap(pointer, other.pointer);
        std::swap(count, other.count);
        return *this;
    }

    T *data() { return pointer; }
    const T *data() const { return pointer; }
    size_t size() const { return count; }
    size_t bytes() const { return count * sizeof(T); }

    /// Copies size() elements from host memory.
    void upload(const T *host) { check(cudaMemcpy(pointer, host, bytes(), cudaMemcpyHostToDevice), "cudaMemcpy (upload)", __FILE__, __LINE__); }
    void upload(const std::vector<T> &host) {
        if (host.size() != count) throw std::runtime_error("DeviceBuffer::upload: host vector has a different size");
        upload(host.data());
    }
    /// Copies size() elements to host memory.
    void download(T *host) const { check(cudaMemcpy(host, pointer, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy (download)", __FILE__, __LINE__); }
    std::vector<T> download() const {
        std::vector<T> host(count);
        download(host.data());
        return host;
    }
    /// Sets every byte to `byte` (0xff makes every float a NaN: poison before a run).
    void fill_bytes(int byte) { check(cudaMemset(pointer, byte, bytes()), "cudaMemset", __FILE__, __LINE__); }

private:
    T *pointer = nullptr;
    size_t count = 0;
};

/// Times work on one stream with a pair of CUDA events: start(), enqueue the
/// work, then stop() waits for it and returns the elapsed milliseconds.
class EventTimer {
public:
    EventTimer() {
        check(cudaEventCreate(&begin), "cudaEventCreate", __FILE__, __LINE__);
        check(cudaEventCreate(&end), "cudaEventCreate", __FILE__, __LINE__);
    }
    ~EventTimer() {
        cudaEventDestroy(begin);
        cudaEventDestroy(end);
    }
    EventTimer(const EventTimer &) = delete;
    EventTimer &operator=(const EventTimer &) = delete;

    void start(cudaStream_t stream = 0) { check(cudaEventRecord(begin, stream), "cudaEventRecord", __FILE__, __LINE__); }
    float stop(cudaStream_t stream = 0) {
        check(cudaEventRecord(end, stream), "cudaEventRecord", __FILE__, __LINE__);
        check(cudaEventSynchronize(end), "cudaEventSynchronize", __FILE__, __LINE__);
        float ms = 0;
        check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime", __FILE__, __LINE__);
        return ms;
    }

private:
    cudaEvent_t begin = nullptr, end = nullptr;
};

/// The median of `samples` (by value: it sorts a copy).
inline double median(std::vector<double> samples) {
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

/// Runs `work` (which enqueues on `stream`) `warmup` times untimed, then
/// `repeats` times each between events; returns the median in milliseconds.
template<typename Work>
double time_median_ms(Work &&work, int warmup = 3, int repeats = 25, cudaStream_t stream = 0) {
    for (int i = 0; i < warmup; i++) work();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", __FILE__, __LINE__);
    check(cudaGetLastError(), "warm-up launch", __FILE__, __LINE__);
    EventTimer timer;
    std::vector<double> samples;
    for (int i = 0; i < repeats; i++) {
        timer.start(stream);
        work();
        samples.push_back(timer.stop(stream));
    }
    check(cudaGetLastError(), "timed launch", __FILE__, __LINE__);
    return median(samples);
}

}  // namespace cuda
}  // namespace pulse

/// Evaluates a CUDA runtime call and throws std::runtime_error (with the call's
/// text, file, line and CUDA's message) if it fails.
#define PULSE_CUDA_CHECK(call) ::pulse::cuda::check((call), #call, __FILE__, __LINE__)
/// After a kernel launch: checks the launch and waits for the kernel (the whole device).
#define PULSE_CUDA_CHECK_LAUNCH(what) ::pulse::cuda::check_launch((what), __FILE__, __LINE__)
/// After a launch on `stream`: checks the launch and waits for that stream only.
#define PULSE_CUDA_CHECK_STREAM(what, stream) ::pulse::cuda::check_stream((what), (stream), __FILE__, __LINE__)

#endif
