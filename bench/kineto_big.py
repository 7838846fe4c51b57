#!/usr/bin/env python3
"""kineto_big.py OUT.json.gz MIB [--analyze BIN_DIR]: writes a torch.profiler (Kineto)
trace of about MIB mebibytes of JSON text, gzip-compressed, shaped as PyTorch writes one
(each step's CPU operators, runtime launches and data wait first, in time order, then every
GPU record of the trace, as the profiler's GPU buffers are flushed), and with --analyze
runs profopt-analyze on it and prints the peak resident memory and the throughput in MB/s
of JSON text, beside `zcat FILE | wc -c` as the floor (the time to gunzip the same text).
"""
import gzip
import os
import subprocess
import sys
import time


def step_events(step, t0):
    """CPU-side records of one step (in time order) and its GPU records, as JSON lines."""
    cpu, gpu = [], []
    t = t0
    cpu.append('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":100,"tid":100,'
               '"ts":%d,"dur":%d,"args":{"External id":%d}}' % (step, t, 9000, step))
    cpu.append('{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcess'
               'DataLoaderIter.__next__","pid":100,"tid":100,"ts":%d,"dur":1000}' % (t + 10))
    t += 1100
    for k in range(60):
        corr = step * 1000 + k
        launch = t + k * 60
        cpu.append('{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":100,"tid":100,'
                   '"ts":%d,"dur":50,"args":{"External id":%d,"Sequence number":%d}}'
                   % (launch - 5, corr, k))
        cpu.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,'
                   '"tid":100,"ts":%d,"dur":8,"args":{"correlation":%d}}' % (launch, corr))
        gpu.append('{"ph":"X","cat":"kernel","name":"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_'
                   'tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_'
                   'kernel__5x_cublas","pid":0,"tid":7,"ts":%d,"dur":40,"args":{"queued":0,'
                   '"device":0,"context":1,"stream":7,"correlation":%d,"registers per thread":'
                   '128,"shared memory":16384,"grid":[64,1,1],"block":[128,1,1]}}'
                   % (launch + 20, corr))
    cpu.append('{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: '
               'AddmmBackward0","pid":100,"tid":101,"ts":%d,"dur":3000}' % (t + 3700))
    cpu.append('{"ph":"X","cat":"user_annotation","name":"Optimizer.step#SGD.step","pid":100,'
               '"tid":100,"ts":%d,"dur":1000}' % (t + 6800))
    return cpu, gpu


def write(path, mib):
    target = mib << 20
    written = step = 0
    gpu_all = []
    with gzip.open(path, "wt", compresslevel=1) as out:
        out.write('{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA A100",'
                  '"totalGlobalMem":42297524224,"computeMajor":8,"computeMinor":0,'
                  '"numSms":108}],\n"traceEvents":[\n')
        # CPU records of every step first, then the GPU records, each half in time order
        spill = path + ".gpu.tmp"
        with open(spill, "w") as gpu_file:
            while written < target:
                cpu, gpu = step_events(step, 1_700_000_000_000_000 + step * 10_000)
                text = ",\n".join(cpu) + ",\n"
                out.write(text)
                gpu_text = ",\n".join(gpu) + ",\n"
                gpu_file.write(gpu_text)
                written += len(text) + len(gpu_text)
                step += 1
        with open(spill) as gpu_file:
            for line in gpu_file:
                out.write(line)
        os.unlink(spill)
        out.write('{"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":%d}\n]}\n'
                  % (1_700_000_000_000_000 + step * 10_000))
    return step


def analyze(path, bin_dir):
    start = time.monotonic()
    text_bytes = int(subprocess.run(f"zcat {path} | wc -c", shell=True, check=True,
                                    capture_output=True, text=True).stdout)
    floor_s = time.monotonic() - start
    out_dir = path + "-report"
    subprocess.run(["rm", "-rf", out_dir], check=True)
    run = subprocess.run(["/usr/bin/time", "-f", "%M %e", os.path.join(bin_dir, "profopt-analyze"),
                          "--json-only", "-o", out_dir, path], capture_output=True, text=True)
    rss_kib, seconds = run.stderr.strip().splitlines()[-1].split()
    seconds = float(seconds)
    mb = text_bytes / 1e6
    print(f"JSON text {mb:.0f} MB ({os.path.getsize(path) / 1e6:.0f} MB gzip): "
          f"profopt-analyze {seconds:.1f} s, {mb / seconds:.1f} MB/s, peak RSS "
          f"{int(rss_kib) / 1024:.0f} MiB; zcat | wc -c {floor_s:.1f} s, {mb / floor_s:.1f} MB/s"
          f" (exit {run.returncode})")
    print(run.stdout.splitlines()[0] if run.stdout else run.stderr)


if __name__ == "__main__":
    steps = write(sys.argv[1], int(sys.argv[2]))
    print(f"wrote {sys.argv[1]}: {steps} steps")
    if len(sys.argv) > 4 and sys.argv[3] == "--analyze":
        analyze(sys.argv[1], sys.argv[4])
