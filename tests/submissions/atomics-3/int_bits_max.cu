// expect: verdict=wrong_answer finding=wrong_value
// atomicMax on the float's bits read as a signed int, NaN skipped: right whenever the maximum is
// positive, but negative floats order backwards as ints, and all of them sit below -infinity's
// bits (0xff800000 is -8388608 as an int), so on all_negative *out never leaves -infinity.
__global__ void max_value(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N && !isnan(X[i])) {
        atomicMax((int*)out, __float_as_int(X[i]));
    }
}
