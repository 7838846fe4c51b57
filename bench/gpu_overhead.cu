// gpu_overhead.cu KERNEL_US LAUNCHES: launches LAUNCHES kernels that each spin for
// KERNEL_US microseconds on one block, waiting for the device every 64 launches, and
// prints the wall time per kernel. bench/gpu_overhead.sh runs it with and without the
// CUPTI collector to measure what the collector costs per kernel.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void spin(long long cycles)
{
	long long start = clock64();

	while (clock64() - start < cycles) {
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: gpu_overhead KERNEL_US LAUNCHES\n");
		return 2;
	}
	double kernel_us = std::atof(argv[1]);
	long launches = std::atol(argv[2]);
	int clock_khz = 0;

	if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0) != cudaSuccess ||
	    clock_khz <= 0) {
		std::fprintf(stderr, "gpu_overhead: no CUDA device\n");
		return 1;
	}
	long long cycles = (long long)(kernel_us * clock_khz / 1000.0);

	spin<<<1, 1>>>(cycles); // warm-up: context, module load
	cudaDeviceSynchronize();
	auto begin = std::chrono::steady_clock::now();
	for (long i = 0; i < launches; i++) {
		spin<<<1, 1>>>(cycles);
		if (i % 64 == 63)
			cudaDeviceSynchronize();
	}
	cudaDeviceSynchronize();
	auto end = std::chrono::steady_clock::now();
	double us = std::chrono::duration<double, std::micro>(end - begin).count();
	std::printf("us_per_kernel %.3f\n", us / (double)launches);
	return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
