// The buffer descriptor every generated host function takes: a pointer and,
// per dimension, the extent and the stride in elements (dimension 0 innermost,
// its stride 1). Plain C, so C, C++ and CUDA callers share it, and a kernel
// receives it by value.
//
// Element (i0, i1, ...) of a buffer is at
// data[(i0 - min[0]) * stride[0] + (i1 - min[1]) * stride[1] + ...]; min is 0 unless
// the buffer holds a window of a larger index space.
// Sizes are run-time values: a generated kernel reads the extents it needs from
// its output buffers (they fix the loops outside the array) and never reads or
// writes outside any buffer's extents.
#ifndef PULSE_BUFFER_H
#define PULSE_BUFFER_H

#include <stdint.h>

#define PULSE_MAX_DIMENSIONS 4

typedef struct pulse_buffer {
    void *data;
    int32_t dimensions;
    int64_t min[PULSE_MAX_DIMENSIONS];
    int64_t extent[PULSE_MAX_DIMENSIONS];
    int64_t stride[PULSE_MAX_DIMENSIONS];
} pulse_buffer;

/// How a generated kernel launches, for users who tune (NAME_launch_info):
/// its block, its resources, and how many of its blocks an SM of the current
/// device holds at once.
typedef struct pulse_launch_info {
    int32_t threads_per_block;
    int32_t registers_per_thread;
    int64_t static_shared_bytes;   /* per block */
    int64_t dynamic_shared_bytes;  /* per block, set at launch */
    int32_t blocks_per_sm;         /* resident at once on the current device */
    int32_t cooperative;           /* 1: every block must be resident at once (gpu_grid_sync) */
} pulse_launch_info;

#ifdef __cplusplus
#include <initializer_list>

/// A dense buffer: dimension 0 innermost, rows packed.
inline pulse_buffer pulse_dense_buffer(const void *data, std::initializer_list<int64_t> extents) {
    pulse_buffer b{};
    b.data = const_cast<void *>(data);
    int64_t stride = 1;
    for (int64_t e : extents) {
        b.extent[b.dimensions] = e;
        b.stride[b.dimensions] = stride;
        stride *= e;
        b.dimensions++;
    }
    return b;
}

/// A 2-D buffer with a row pitch in elements (pitch >= width).
inline pulse_buffer pulse_pitched_buffer(const void *data, int64_t width, int64_t height, int64_t pitch) {
    pulse_buffer b{};
    b.data = const_cast<void *>(data);
    b.dimensions = 2;
    b.extent[0] = width, b.extent[1] = height;
    b.stride[0] = 1, b.stride[1] = pitch;
    return b;
}
#endif

#endif
