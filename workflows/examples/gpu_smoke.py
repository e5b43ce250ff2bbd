"""A GPU stage in Python that follows the stage protocol (docs/stage-protocol.md): it reports
which GPUs longhaul gave it, then times bf16 matrix products on them, with progress and a
metric. Used by gpu-smoke.yaml to check a GPU node end to end."""
import json
import os
import time


def emit(event):
    path = os.environ.get("LONGHAUL_EVENTS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")


def main():
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
    emit({"output": {"name": "cuda_visible_devices", "value": visible}})
    import torch

    count = torch.cuda.device_count()
    emit({"metric": {"name": "gpus_seen", "value": count}})
    if count == 0:
        emit({"message": {"level": "error", "text": "no GPU visible to the stage"}})
        raise SystemExit(3)
    name = torch.cuda.get_device_name(0)
    emit({"output": {"name": "device", "value": name}})
    n, steps = 8192, 20
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        a @ b
        torch.cuda.synchronize()
        emit({"progress": {"done": i + 1, "total": steps, "unit": "matmuls"}})
    seconds = time.perf_counter() - start
    tflops = 2 * n**3 * steps / seconds / 1e12
    emit({"metric": {"name": "bf16_tflops", "value": tflops}})
    print(f"{name}: CUDA_VISIBLE_DEVICES={visible}, {steps} products of {n}x{n} bf16 at "
          f"{tflops:.0f} TFLOP/s")


if __name__ == "__main__":
    main()
