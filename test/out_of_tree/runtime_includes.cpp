// The runtime headers resolve through Pulse::runtime both as the docs spell
// them (<pulse/...>) and as generated headers do ("pulse_buffer.h").
#include <pulse/pulse_buffer.h>

#include "pulse_buffer.h"

int main() {
    float data[4] = {0, 1, 2, 3};
    pulse_buffer b = pulse_dense_buffer(data, {4});
    return b.dimensions == 1 && b.extent[0] == 4 && b.stride[0] == 1 ? 0 : 1;
}
