package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/internal/gcpace"
	"github.com/memcluster/memcluster/internal/nodeindex"
)

// memoryLimitRatio is the share of a container's memory limit the Go heap aims under: the rest is Pebble's
// manual allocations, stacks and the kernel's page cache of the node's own files.
const memoryLimitRatio = 0.9

// applyMemoryLimit sets the Go runtime's soft memory limit from --memory-limit and logs where it came from.
// Without a limit the heap grows to twice what is live before each collection, which at a million memories is
// gigabytes the node does not need (docs/benchmarks.md, "Footprint"); with one, the collector runs more often
// as the heap nears it.
func applyMemoryLimit(flag string, log *slog.Logger) error {
	switch flag {
	case "off":
		debug.SetMemoryLimit(math.MaxInt64)
		log.Info("memory limit off")
		return nil
	case "auto":
		if v := os.Getenv("GOMEMLIMIT"); v != "" {
			log.Info("memory limit from GOMEMLIMIT", "limit", v)
			return nil
		}
		limit, err := memlimit.Set(memlimit.WithRatio(memoryLimitRatio), memlimit.WithProvider(memlimit.FromCgroup))
		switch {
		case errors.Is(err, memlimit.ErrNoLimit) || err == nil && limit == math.MaxInt64:
			log.Info("memory limit: none (no cgroup limit; set --memory-limit or GOMEMLIMIT to bound the heap)")
		case err != nil:
			log.Info("memory limit: none (cgroup limit unreadable)", "err", err)
		default:
			log.Info("memory limit from the cgroup", "limit_mib", limit>>20, "ratio", memoryLimitRatio)
		}
		return nil
	}
	n, err := parseBytes(flag)
	if err != nil {
		return fmt.Errorf("--memory-limit %q: %w", flag, err)
	}
	debug.SetMemoryLimit(n)
	log.Info("memory limit", "limit_mib", n>>20)
	return nil
}

// parseBytes reads a size as GOMEMLIMIT writes it: an integer with an optional unit B, KiB, MiB, GiB or TiB.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	num, shift := s, uint(0)
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			num, shift = v, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("want auto, off, or a size such as 3GiB or 2500MiB")
	case n <= 0:
		return 0, fmt.Errorf("a size must be positive")
	case n > math.MaxInt64>>shift:
		return 0, fmt.Errorf("too large")
	}
	return n << shift, nil
}

// startGCPacing runs the collector's pacer (internal/gcpace) unless --gc-pacing is off or GOGC=off, and exports
// the vectors' bytes as memcluster_vector_bytes. The heap at rest is the vector slabs, the full-text caches
// (bounded, kept from search to search) and Pebble's buffers (pebble: its block cache and memtables, when on the
// Go heap).
func startGCPacing(ctx context.Context, flag string, minHeadroom int64, meters nodeindex.Meters, pebble func() int64,
	reg prometheus.Registerer, log *slog.Logger) error {
	vectors := meters.Vectors
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_vector_bytes",
		Help: "bytes of the vector slabs of this node's shard indexes: half-precision rows, their scales and int8 copy, and room grown for more"},
		func() float64 { return float64(vectors.Bytes()) }))
	if flag == "off" {
		log.Info("gc pacing off: GOGC as the runtime reads it")
		return nil
	}
	held := func() int64 { return vectors.Bytes() + meters.Text.Bytes() + pebble() }
	p, err := gcpace.New(gcpace.Options{Held: held, MinHeadroom: minHeadroom, Logger: log, Registry: reg})
	if err != nil {
		return fmt.Errorf("--gc-pacing: %w", err)
	}
	if p == nil {
		log.Info("gc pacing off: GOGC=off")
		return nil
	}
	go p.Run(ctx)
	return nil
}

// minHeadroom is --gc-min-headroom in bytes, -1 for none (gcpace.Options.MinHeadroom).
func (c *config) minHeadroom() (int64, error) {
	if c.gcMinHeadroom == "0" {
		return -1, nil
	}
	n, err := parseBytes(c.gcMinHeadroom)
	if err != nil {
		return 0, fmt.Errorf("--gc-min-headroom %q: want 0 (none) or a size such as 32MiB", c.gcMinHeadroom)
	}
	if n > gcpace.MaxMinHeadroom {
		return 0, fmt.Errorf("--gc-min-headroom %q: at most %dGiB", c.gcMinHeadroom, gcpace.MaxMinHeadroom>>30)
	}
	return n, nil
}
