package cluster

import (
	"errors"
	"testing"
	"time"
)

func TestConfigRaftTimingDefaultsAndLimits(t *testing.T) {
	base := Config{NodeID: "n1", DataDir: t.TempDir()}
	c := base.withDefaults()
	if c.CommitTimeout != 50*time.Millisecond || c.ShardCommitTimeout != 500*time.Millisecond ||
		c.HeartbeatCoalesceWindow != 10*time.Millisecond {
		t.Fatalf("defaults: meta commit %v, shard commit %v, coalesce window %v", c.CommitTimeout,
			c.ShardCommitTimeout, c.HeartbeatCoalesceWindow)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// A short heartbeat timeout shortens the default window with it: a batch never holds a heartbeat back long.
	short := base
	short.HeartbeatTimeout, short.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond
	if c := short.withDefaults(); c.HeartbeatCoalesceWindow != 5*time.Millisecond || c.Validate() != nil {
		t.Fatalf("window %v for a 100ms heartbeat timeout: %v", c.HeartbeatCoalesceWindow, c.Validate())
	}
	for name, mod := range map[string]func(*Config){
		"window of a whole heartbeat period": func(c *Config) { c.HeartbeatCoalesceWindow = 50 * time.Millisecond },
		"shard commit timeout under 1ms":     func(c *Config) { c.ShardCommitTimeout = time.Microsecond },
		"negative window":                    func(c *Config) { c.HeartbeatCoalesceWindow = -time.Millisecond },
	} {
		c := base
		mod(&c)
		if err := c.withDefaults().Validate(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: got %v, want ErrBadConfig", name, err)
		}
	}
}
