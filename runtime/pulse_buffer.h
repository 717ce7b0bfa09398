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

/// A dense buffer over the box [min[d], min[d] + extent[d]) of each dimension,
/// dimension 0 innermost, rows packed (strides 1, extent[0], extent[0] *
/// extent[1], ...). Plain C. The generated headers build each buffer of a
/// kernel this way (NAME_BUFFER_buffer(data, instances)); dimensions past
/// PULSE_MAX_DIMENSIONS are left out.
static inline pulse_buffer pulse_make_dense_buffer(void *data, int32_t dimensions, const int64_t *min, const int64_t *extent) {
    pulse_buffer b;
    int64_t stride = 1;
    int32_t d;
    for (d = 0; d < PULSE_MAX_DIMENSIONS; d++) b.min[d] = 0, b.extent[d] = 0, b.stride[d] = 0;
    b.data = data;
    b.dimensions = dimensions < PULSE_MAX_DIMENSIONS ? dimensions : PULSE_MAX_DIMENSIONS;
    for (d = 0; d < b.dimensions; d++) {
        b.min[d] = min ? min[d] : 0;
        b.extent[d] = extent[d];
        b.stride[d] = stride;
        stride *= extent[d];
    }
    return b;
}

/// Whether the memory two buffers' elements span overlaps: the bytes from
/// their lowest element to the end of their highest, whatever the strides (two
/// buffers interleaved in one allocation count as overlapping). A buffer
/// without elements overlaps nothing. The generated host functions refuse an
/// output that overlaps another buffer: the kernel would read what it writes.
static inline int pulse_buffers_overlap(const pulse_buffer *a, int64_t a_element_bytes, const pulse_buffer *b,
                                        int64_t b_element_bytes) {
    const pulse_buffer *buffers[2] = {a, b};
    const int64_t bytes[2] = {a_element_bytes, b_element_bytes};
    uintptr_t begin[2], end[2];
    int i, d;
    for (i = 0; i < 2; i++) {
        int64_t low = 0, high = 0;
        for (d = 0; d < buffers[i]->dimensions && d < PULSE_MAX_DIMENSIONS; d++) {
            const int64_t reach = buffers[i]->stride[d] * (buffers[i]->extent[d] - 1);
            if (buffers[i]->extent[d] <= 0) return 0;
            if (reach < 0) low += reach;
            else high += reach;
        }
        begin[i] = (uintptr_t)buffers[i]->data + (uintptr_t)(low * bytes[i]);
        end[i] = (uintptr_t)buffers[i]->data + (uintptr_t)((high + 1) * bytes[i]);
    }
    return begin[0] < end[1] && begin[1] < end[0];
}

#ifdef __cplusplus
#include <initializer_list>

/// A dense buffer starting at index 0 in every dimension (C++ only; C and
/// windows of a larger index space: pulse_make_dense_buffer).
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
