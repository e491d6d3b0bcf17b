package server

import (
	"math"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// tenantLimits gives each tenant its own token bucket. Buckets live in an LRU so that a flood of distinct
// tenants cannot grow memory without bound (an evicted tenant starts again with a full bucket).
type tenantLimits struct {
	rate  rate.Limit
	burst int
	mu    sync.Mutex
	cache *lru.Cache[string, *rate.Limiter]
}

func newTenantLimits(perSecond float64, burst int) *tenantLimits {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = int(math.Max(1, perSecond))
	}
	c, _ := lru.New[string, *rate.Limiter](100_000)
	return &tenantLimits{rate: rate.Limit(perSecond), burst: burst, cache: c}
}

// allow reports whether tenant may proceed now, and otherwise how long until it may.
func (t *tenantLimits) allow(tenant string, now time.Time) (bool, time.Duration) {
	if t == nil {
		return true, 0
	}
	t.mu.Lock()
	l, ok := t.cache.Get(tenant)
	if !ok {
		l = rate.NewLimiter(t.rate, t.burst)
		t.cache.Add(tenant, l)
	}
	t.mu.Unlock()
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// tenantOf names the tenant a request is charged to: the token's identity with authentication, else the user.
func tenantOf(p principal, sc scope) string {
	if p.name != "anonymous" && p.name != "" {
		return "token:" + p.name
	}
	if len(sc.users) > 0 && sc.users[0] != "" {
		return "user:" + sc.users[0]
	}
	return "anonymous"
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}
