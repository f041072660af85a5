// CUDA only (OpenCL gates its queue with a user event instead): a kernel that keeps the stream
// busy for a given time, so that the host can queue the launches to be timed behind it and the
// device then runs them back to back, without waiting for the host between them.

// one thread spins on the global nanosecond timer until `ns` have passed
extern "C" __global__ void hold(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
