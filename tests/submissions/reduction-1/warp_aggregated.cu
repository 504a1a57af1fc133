// expect: verdict=accepted
// One atomic per warp: the leader adds the number of active lanes.
__global__ void count(int* c) {
    const unsigned active = __activemask();
    const int leader = __ffs(active) - 1;
    if ((threadIdx.x % 32) == leader) atomicAdd(c, __popc(active));
}
