// expect: verdict=wrong_answer finding=lost_updates
// The race itself: a plain read-add-write on one int from a million threads.
__global__ void count(int* c) { *c = *c + 1; }
