// expect: verdict=accepted
// The integer-ordering alternative: NaN skipped; a value with the sign bit clear takes a signed
// atomicMax on its bits, one with the sign bit set (including -0.0) an unsigned atomicMin. +0.0
// (bits 0) beats -0.0 (bits 0x80000000, the smallest signed int), so the rule holds.
__global__ void max_value(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N || isnan(X[i])) return;
    const float v = X[i];
    if ((__float_as_uint(v) >> 31) == 0) {
        atomicMax((int*)out, __float_as_int(v));
    } else {
        atomicMin((unsigned int*)out, __float_as_uint(v));
    }
}
