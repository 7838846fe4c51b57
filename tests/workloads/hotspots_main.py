#!/usr/bin/env python3
"""hotspots_main: hotspots_workers with num_workers=0: the training loop loads every
sample itself, so its load stage names the three functions with their designed self
shares (60/30/10%, within 5 points; docs/sampling.md)."""

import hotspots_workers

if __name__ == "__main__":
    hotspots_workers.main(0)
