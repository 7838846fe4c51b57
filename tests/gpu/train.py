"""A PyTorch CUDA training run for the GPU checks (tests/gpu/README.md), with the ground
truth it measures itself.

Models: a small CNN (torchvision's ResNet-18 on 64x64 images), a transformer encoder (four
layers of width 1024) and a deep narrow MLP whose kernels are a few microseconds long (the
launch-bound case). Each step: batch from a DataLoader, host-to-device copy, forward under
autocast when --precision bf16, backward, optimizer; loss.item() ends the step, as most
training loops do, so a step's wall time includes its GPU work.

The truth file (--truth, JSON) holds what the script measured with its own clocks:
per-step wall times and data waits, and with --profile the kernels torch.profiler saw
over the profiled steps, their GPU busy share and kernel names. --profopt adds the three
documented lines of profopt (docs/python.md); without it the script never imports
profopt. It runs on the CPU too (--device cpu), to test the script without a GPU.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    """Random images and labels made once; delay_ms of sleep per sample stands for a slow
    decode (I/O-like: it does not use a core)."""

    def __init__(self, count, shape, classes, delay_ms):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn((count,) + shape, generator=generator)
        self.labels = torch.randint(0, classes, (count,), generator=generator)
        self.delay_s = delay_ms / 1000.0

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, index):
        if self.delay_s:
            time.sleep(self.delay_s)
        return self.inputs[index], self.labels[index]


class Tokens(Dataset):
    def __init__(self, count, sequence, width, classes):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(count, sequence, width, generator=generator)
        self.labels = torch.randint(0, classes, (count,), generator=generator)

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, index):
        return self.inputs[index], self.labels[index]


class Encoder(nn.Module):
    def __init__(self, width, layers, classes):
        super().__init__()
        layer = nn.TransformerEncoderLayer(width, nhead=16, dim_feedforward=4 * width,
                                           batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


def deep_mlp(width, layers, classes):
    parts = []
    for _ in range(layers):
        parts += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*parts, nn.Linear(width, classes))


def build(args):
    """(dataset, model) of the chosen kind."""
    classes = 100
    count = args.batch * args.epoch_batches
    if args.model == "cnn":
        import torchvision
        model = torchvision.models.resnet18(num_classes=classes)
        return Images(count, (3, 64, 64), classes, args.delay_ms), model
    if args.model == "transformer":
        return Tokens(count, 128, 1024, classes), Encoder(1024, 4, classes)
    return Images(count, (256,), classes, args.delay_ms), deep_mlp(256, 12, classes)


class Leak:
    """Keeps leak_mb of device memory per step, as a list of tensors kept by mistake."""

    def __init__(self, megabytes, device):
        self.bytes = megabytes << 20
        self.device = device
        self.kept = []

    def step(self):
        if self.bytes:
            self.kept.append(torch.empty(self.bytes, dtype=torch.uint8, device=self.device))


def profiler_truth(profiler, steps):
    """Kernels, copies and their busy share over the profiled steps, from the profiler's
    own Chrome trace: the union of GPU activity intervals over the span of the steps."""
    path = f"/tmp/profopt-gpu-profile-{os.getpid()}.json"
    profiler.export_chrome_trace(path)
    with open(path) as file:
        events = json.load(file)
    if isinstance(events, dict):
        events = events["traceEvents"]
    os.unlink(path)
    span = [e for e in events if e.get("name", "").startswith("ProfilerStep#")]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    kernels = [e for e in gpu if e.get("cat") == "kernel"]
    begin = min(e["ts"] for e in span) if span else 0
    end = max(e["ts"] + e["dur"] for e in span) if span else 0
    intervals = sorted((max(e["ts"], begin), min(e["ts"] + e["dur"], end)) for e in gpu)
    busy, last = 0.0, begin
    for start, stop in intervals:
        if stop <= last:
            continue
        busy += stop - max(start, last)
        last = stop
    names = {}
    for e in kernels:
        names[e["name"]] = names.get(e["name"], 0) + 1
    return {
        "profiled_steps": steps,
        "step_spans": len(span),
        "kernels": len(kernels),
        "copies": sum(1 for e in gpu if e.get("cat") == "gpu_memcpy"),
        "memsets": sum(1 for e in gpu if e.get("cat") == "gpu_memset"),
        "kernels_per_step": len(kernels) / steps if steps else 0,
        "kernel_us": sum(e["dur"] for e in kernels),
        "busy_pct": 100.0 * busy / (end - begin) if end > begin else None,
        "span_us": end - begin,
        "kernel_names": sorted(names.items(), key=lambda item: -item[1])[:60],
    }


def parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("cnn", "transformer", "mlp"), default="cnn")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--epoch-batches", type=int, default=4,
                        help="batches per epoch (the dataset holds this many)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--delay-ms", type=float, default=0.0,
                        help="sleep per sample in __getitem__ (input-bound runs)")
    parser.add_argument("--leak-mb", type=int, default=0)
    parser.add_argument("--channels-last", action="store_true",
                        help="the model and its inputs in channels_last memory format")
    parser.add_argument("--tf32", action="store_true",
                        help="TF32 for float32 matrix multiplications (allow_tf32)")
    parser.add_argument("--graphs", action="store_true",
                        help="CUDA graphs: torch.cuda.make_graphed_callables on the model")
    parser.add_argument("--profile", choices=("none", "last", "window"), default="none",
                        help="torch.profiler over the last 20 steps (last) or steps 20-39")
    parser.add_argument("--profopt", action="store_true", help="the three profopt lines")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--truth", required=True)
    return parser.parse_args()


def main():
    args = parse()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    dataset, model = build(args)
    model = model.to(device, memory_format=memory_format)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, drop_last=True,
                        num_workers=args.workers, pin_memory=device.type == "cuda",
                        persistent_workers=args.workers > 0)
    if args.graphs:
        sample = torch.randn((args.batch,) + tuple(dataset[0][0].shape), device=device)
        model = torch.cuda.make_graphed_callables(model, (sample,))
    leak = Leak(args.leak_mb, device)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16,
                              enabled=args.precision == "bf16")
    profopt = None
    if args.profopt:
        import profopt
        loader = profopt.instrument(loader)                                       # 1
    profiler = None
    if args.profile != "none":
        from torch.profiler import ProfilerActivity, profile, schedule
        window = (args.steps - 20, 20) if args.profile == "last" else (20, 20)
        profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                           schedule=schedule(wait=window[0], warmup=0, active=window[1],
                                             repeat=1))
    steps, done = [], 0
    began = time.perf_counter()
    context = (profopt.run(loader=loader, model=model, optimizer=optimizer,           # 2
                           config={"precision": args.precision})
               if profopt else _Nothing())
    with context:
        if profiler:
            profiler.start()
        while done < args.steps:
            asked = time.perf_counter()
            for inputs, labels in loader:                                         # 3
                got = time.perf_counter()
                inputs = inputs.to(device, non_blocking=True, memory_format=memory_format
                                    if inputs.dim() == 4 else torch.preserve_format)
                labels = labels.to(device, non_blocking=True)
                with autocast:
                    loss = F.cross_entropy(model(inputs), labels)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                leak.step()
                loss.item()
                end = time.perf_counter()
                steps.append({"wall_s": end - asked, "data_wait_s": got - asked,
                              "end_s": end - began})
                done += 1
                if profiler:
                    profiler.step()
                if done == args.steps:
                    break
                asked = time.perf_counter()
        if profiler:
            profiler.stop()
    truth = {"args": vars(args), "steps": steps, "torch": torch.__version__,
             "wall_s": time.perf_counter() - began}
    if device.type == "cuda":
        truth["device"] = torch.cuda.get_device_name(device)
        truth["max_memory_allocated"] = torch.cuda.max_memory_allocated(device)
        truth["memory_allocated"] = torch.cuda.memory_allocated(device)
    if profiler:
        profiled = window[1]
        truth["profiler"] = profiler_truth(profiler, profiled)
        truth["profiler"]["first_step"] = window[0]
    with open(args.truth, "w") as file:
        json.dump(truth, file, indent=1)
    walls = sorted(step["wall_s"] for step in (steps[10:] or steps))
    print(f"train.py {args.model} {args.precision}: {len(steps)} steps, median "
          f"{1000 * walls[len(walls) // 2]:.2f} ms", file=sys.stderr)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
