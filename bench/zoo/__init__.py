"""Model definitions for the benchmark zoo: plain PyTorch, no downloads, no torchvision."""
