// expect: verdict=accepted
#include <cstdio>
extern "C" __global__ void count(int* c) { atomicAdd(c, 1); }
