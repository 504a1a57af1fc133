// expect: verdict=compile_error
// Tries to read a host file through the preprocessor; refused before NVRTC runs.
#include "/etc/passwd"
__global__ void reduce(const float* X, float* out, int N) {}
