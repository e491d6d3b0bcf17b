package llm

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memcluster/memcluster/consolidation"
)

var t0 = time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)

func userMsg(id, text string) consolidation.Message {
	return consolidation.Message{ID: id, Role: consolidation.RoleUser, Content: text, Time: t0}
}

func TestExtractHappyPath(t *testing.T) {
	content := `{"facts":[` +
		fact("User", "lives_in", " Berlin ", "  user lives in\n Berlin ", "positive", false) + "," +
		fact("user", "works_at", "Acme", "user works at Acme", "negative", false) + "," +
		fact("user", "favorite_color", "green", "user's favorite color is green", "positive", true) +
		`],"rejected":[{"sentence":"I'm so tired today","reason":"transient"}]}`
	r := newRig(t, Options{APIKey: "k"}, ExtractorOptions{}, reply{content: content})
	m := userMsg("m-1", "I live in Berlin now and no longer work at Acme. Remember that my favorite color is green. I'm so tired today.")

	cands, rejs := r.ex.Extract(m)

	want := []consolidation.Candidate{
		{Subject: "user", Predicate: "lives_in", Object: "Berlin", Statement: "user lives in Berlin", Polarity: consolidation.Positive, Source: "m-1", Time: t0},
		{Subject: "user", Predicate: "works_at", Object: "Acme", Statement: "user works at Acme", Polarity: consolidation.Negative, Source: "m-1", Time: t0},
		{Subject: "user", Predicate: "favorite_color", Object: "green", Statement: "user's favorite color is green", Polarity: consolidation.Positive, Explicit: true, Source: "m-1", Time: t0},
	}
	if !reflect.DeepEqual(cands, want) {
		t.Fatalf("candidates:\n got %+v\nwant %+v", cands, want)
	}
	wantRej := []consolidation.Rejection{{Sentence: "I'm so tired today", Reason: "transient", Source: "m-1"}}
	if !reflect.DeepEqual(rejs, wantRej) {
		t.Fatalf("rejections: got %+v, want %+v", rejs, wantRej)
	}
	reqs := r.fake.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	q := reqs[0].req
	switch {
	case q.Model != "test-model" || q.Temperature == nil || *q.Temperature != 0 || q.ResponseFormat.Type != "json_object":
		t.Fatalf("request: model %q temperature %v response_format %q", q.Model, q.Temperature, q.ResponseFormat.Type)
	case len(q.Messages) != 2 || q.Messages[0].Role != "system" || q.Messages[1].Role != "user" || q.Messages[1].Content != m.Content:
		t.Fatalf("messages: %+v", q.Messages)
	case !strings.Contains(q.Messages[0].Content, consolidation.PredLivesIn) || !strings.Contains(q.Messages[0].Content, consolidation.PredAllergicTo):
		t.Fatal("system prompt does not give the rules' predicate vocabulary")
	}
	if r.successes(t) != 1 {
		t.Fatalf("memcluster_llm_extract_total = %v, want 1", r.successes(t))
	}
	for _, reason := range allReasons {
		if v := r.fallbacks(t, reason); v != 0 {
			t.Fatalf("fallbacks{%s} = %v, want 0", reason, v)
		}
	}
}

// The extractor plugs into the consolidator: the model's facts are decided like the rules'.
func TestExtractorInConsolidator(t *testing.T) {
	r := newRig(t, Options{}, ExtractorOptions{},
		reply{content: answer(fact("user", "lives_in", "Lisbon", "user lives in Lisbon", "positive", false))})
	n := 0
	c := consolidation.Consolidator{NewID: func(time.Time) string { n++; return "f" + string(rune('0'+n)) }, Extract: r.ex.Func()}
	msgs := []consolidation.Message{userMsg("m-1", "These days home is Lisbon."),
		{ID: "m-2", Role: consolidation.RoleAssistant, Content: "Lisbon is lovely.", Time: t0.Add(time.Second)}}
	rep, err := c.Run(msgs, nil, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Decisions) != 1 || rep.Decisions[0].Op != consolidation.OpAdd {
		t.Fatalf("decisions: %+v", rep.Decisions)
	}
	if f := rep.Decisions[0].New; f.Object != "Lisbon" || !f.ValidFrom.Equal(t0) || len(f.Provenance) != 1 || f.Provenance[0] != "m-1" {
		t.Fatalf("fact: %+v", f)
	}
	if r.fake.calls() != 1 {
		t.Fatalf("%d calls, want 1 (the assistant message costs none)", r.fake.calls())
	}
}

// checkFallback asserts the rules answered and the reason was counted and logged once.
func checkFallback(t *testing.T, r *rig, m consolidation.Message, reason string, before float64) {
	t.Helper()
	cands, rejs := r.ex.Extract(m)
	wc, wr := consolidation.Extract(m)
	if !reflect.DeepEqual(cands, wc) || !reflect.DeepEqual(rejs, wr) {
		t.Fatalf("fallback: got %+v %+v, want the rules' %+v %+v", cands, rejs, wc, wr)
	}
	if got := r.fallbacks(t, reason); got != before+1 {
		t.Fatalf("fallbacks{%s} = %v, want %v", reason, got, before+1)
	}
	if n := strings.Count(r.logs.String(), "reason="+reason); n != int(before)+1 {
		t.Fatalf("%d warnings with reason=%s, want %v:\n%s", n, reason, before+1, r.logs.String())
	}
}

func TestExtractMalformedFallsBack(t *testing.T) {
	good := answer(fact("user", "lives_in", "Berlin", "user lives in Berlin", "positive", false))
	cases := map[string]string{
		"prose":       "Sure! The user lives in Berlin.",
		"truncated":   `{"facts":[{"subject":"user"`,
		"trailing":    good + ` {"facts":[]}`,
		"code fence":  "```json\n" + good + "\n```",
		"only spaces": "   \n ",
	}
	r := newRig(t, Options{}, ExtractorOptions{})
	m := userMsg("m-7", "I live in Berlin.")
	n := 0.0
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			r.fake.script(reply{content: content})
			reason := reasonMalformed
			if strings.TrimSpace(content) == "" {
				reason = reasonBadResponse // empty content is the envelope's fault
				checkFallback(t, r, m, reason, 0)
				return
			}
			checkFallback(t, r, m, reason, n)
			n++
		})
	}
	if r.successes(t) != 0 {
		t.Fatal("a malformed answer counted as a success")
	}
}

func TestExtractSchemaViolationFallsBack(t *testing.T) {
	ok := func(mut func(*string)) string {
		f := fact("user", "lives_in", "Berlin", "user lives in Berlin", "positive", false)
		mut(&f)
		return answer(f)
	}
	repl := func(old, new string) func(*string) {
		return func(s *string) { *s = strings.Replace(*s, old, new, 1) }
	}
	many := make([]string, maxFacts+1)
	for i := range many {
		many[i] = fact("user", "likes", "tea", "user likes tea", "positive", false)
	}
	cases := map[string]string{
		"unknown top-level key": `{"facts":[],"rejected":[],"confidence":0.9}`,
		"unknown fact key":      ok(repl(`"explicit":false`, `"explicit":false,"confidence":1`)),
		"bad polarity":          ok(repl(`"positive"`, `"maybe"`)),
		"too many facts":        answer(many...),
		"missing explicit":      ok(repl(`,"explicit":false`, ``)),
		"missing facts":         `{"rejected":[]}`,
		"facts not a list":      `{"facts":"Berlin"}`,
		"not an object":         `[]`,
		"null fact":             `{"facts":[null]}`,
		"camelCase predicate":   ok(repl(`"lives_in"`, `"livesIn"`)),
		"predicate with space":  ok(repl(`"lives_in"`, `"lives in"`)),
		"long predicate":        ok(repl(`"lives_in"`, `"`+strings.Repeat("a", 65)+`"`)),
		"reserved predicate":    ok(repl(`"lives_in"`, `"pattern"`)),
		"empty object":          ok(repl(`"Berlin"`, `"  "`)),
		"punctuation object":    ok(repl(`"Berlin"`, `"..."`)),
		"object too long":       ok(repl(`"Berlin"`, `"`+strings.Repeat("x", maxObjectRunes+1)+`"`)),
		"control character":     ok(repl(`"Berlin"`, `"Ber\u0000lin"`)),
		"first-person subject":  ok(repl(`"user"`, `"I"`)),
		"empty statement":       ok(repl(`"user lives in Berlin"`, `""`)),
		"bad reject reason":     `{"facts":[],"rejected":[{"sentence":"hi","reason":"boring"}]}`,
		"reject without reason": `{"facts":[],"rejected":[{"sentence":"hi"}]}`,
		"explicit as string":    ok(repl(`"explicit":false`, `"explicit":"false"`)),
	}
	r := newRig(t, Options{}, ExtractorOptions{})
	m := userMsg("m-8", "I live in Berlin.")
	n := 0.0
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			r.fake.script(reply{content: content})
			checkFallback(t, r, m, reasonSchema, n)
			n++
		})
	}
	if got := r.fake.calls(); got != len(cases) {
		t.Fatalf("%d calls, want %d: a schema violation is not retried", got, len(cases))
	}
}

func TestExtractRetries500ThenSucceeds(t *testing.T) {
	good := answer(fact("user", "speaks", "Portuguese", "user speaks Portuguese", "positive", false))
	r := newRig(t, Options{}, ExtractorOptions{},
		reply{status: 500, body: errorBody("overloaded")}, reply{status: 502, body: "bad gateway"}, reply{content: good})
	cands, _ := r.ex.Extract(userMsg("m-2", "I speak Portuguese."))
	if len(cands) != 1 || cands[0].Object != "Portuguese" {
		t.Fatalf("candidates %+v, want the model's after two retries", cands)
	}
	if r.fake.calls() != 3 || r.successes(t) != 1 || r.fallbacks(t, reasonHTTP) != 0 {
		t.Fatalf("calls %d, successes %v, http fallbacks %v", r.fake.calls(), r.successes(t), r.fallbacks(t, reasonHTTP))
	}
}

func TestExtractHTTPErrorsExhaustRetries(t *testing.T) {
	r := newRig(t, Options{}, ExtractorOptions{}, reply{status: 503, body: errorBody("down for maintenance")})
	checkFallback(t, r, userMsg("m-3", "I live in Oslo."), reasonHTTP, 0)
	if r.fake.calls() != 1+defaultMaxRetries {
		t.Fatalf("%d calls, want %d", r.fake.calls(), 1+defaultMaxRetries)
	}
	if !strings.Contains(r.logs.String(), "down for maintenance") {
		t.Fatalf("the server's message is not in the warning:\n%s", r.logs.String())
	}
}

func TestExtract429HonoursRetryAfter(t *testing.T) {
	good := answer(fact("user", "likes", "jazz", "user likes jazz", "positive", false))
	r := newRig(t, Options{}, ExtractorOptions{},
		reply{status: 429, retryAfter: "1", body: errorBody("rate limited")}, reply{content: good})
	start := time.Now()
	cands, _ := r.ex.Extract(userMsg("m-4", "I like jazz."))
	// A lower bound only: the client waited as told (MinBackoff is 1ms here), however slow the machine.
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("retried after %v, before the server's Retry-After of 1s", waited)
	}
	if len(cands) != 1 || r.fake.calls() != 2 || r.successes(t) != 1 {
		t.Fatalf("candidates %+v, calls %d, successes %v", cands, r.fake.calls(), r.successes(t))
	}
}

// A Retry-After beyond the message's time budget is not slept: the rules answer at once,
// and the reason is the HTTP status, not a timeout.
func TestExtract429BeyondBudgetFallsBackNow(t *testing.T) {
	r := newRig(t, Options{MaxBackoff: time.Minute, MinBackoff: time.Millisecond}, ExtractorOptions{Timeout: 5 * time.Second},
		reply{status: 429, retryAfter: "30", body: errorBody("rate limited")})
	checkFallback(t, r, userMsg("m-5", "I live in Rome."), reasonHTTP, 0)
	if r.fake.calls() != 1 {
		t.Fatalf("%d calls, want 1", r.fake.calls())
	}
}

func TestExtractTimeoutFallsBack(t *testing.T) {
	r := newRig(t, Options{MaxRetries: -1}, ExtractorOptions{Timeout: 200 * time.Millisecond},
		reply{delay: time.Minute, content: answer()})
	checkFallback(t, r, userMsg("m-6", "I work at Initech."), reasonTimeout, 0)
}

func TestExtractTransportErrorFallsBack(t *testing.T) {
	dead := newFake(t)
	url := dead.url()
	dead.srv.Close() // nothing listens there any more
	r := newRig(t, Options{BaseURL: url, MaxRetries: -1}, ExtractorOptions{})
	checkFallback(t, r, userMsg("m-9", "I am allergic to peanuts."), reasonTransport, 0)
}

func TestAPIKeySentAsBearerNeverLogged(t *testing.T) {
	const key = "sk-test-SECRET-0123456789"
	good := answer(fact("user", "lives_in", "Berlin", "user lives in Berlin", "positive", false))
	r := newRig(t, Options{APIKey: key}, ExtractorOptions{},
		reply{status: 401, body: errorBody("Incorrect API key provided: " + key)}, reply{content: good})
	checkFallback(t, r, userMsg("m-1", "I live in Berlin."), reasonHTTP, 0)
	if cands, _ := r.ex.Extract(userMsg("m-2", "I live in Berlin.")); len(cands) != 1 {
		t.Fatalf("second call: %+v", cands)
	}
	reqs := r.fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (a 401 is not retried)", len(reqs))
	}
	for i, q := range reqs {
		if q.auth != "Bearer "+key {
			t.Fatalf("request %d: Authorization %q", i, q.auth)
		}
	}
	logs := r.logs.String()
	if strings.Contains(logs, key) || strings.Contains(logs, "SECRET") {
		t.Fatalf("the API key is in the logs:\n%s", logs)
	}
	if !strings.Contains(logs, "Incorrect API key provided: [redacted]") {
		t.Fatalf("the server's (masked) message is not in the logs:\n%s", logs)
	}
}

func TestNonUserMessagesMakeNoCall(t *testing.T) {
	r := newRig(t, Options{}, ExtractorOptions{}, reply{content: answer()})
	for _, role := range []consolidation.Role{consolidation.RoleAssistant, consolidation.RoleTool} {
		m := consolidation.Message{ID: "a-1", Role: role, Content: "I live in Berlin.", Time: t0}
		if c, rj := r.ex.Extract(m); c != nil || rj != nil {
			t.Fatalf("%s message: %+v %+v", role, c, rj)
		}
	}
	if r.fake.calls() != 0 || r.successes(t) != 0 {
		t.Fatalf("%d calls, %v successes, want none", r.fake.calls(), r.successes(t))
	}
}

func TestBreakerPausesCallsAfterProviderFailures(t *testing.T) {
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newRig(t, Options{MaxRetries: -1}, ExtractorOptions{BreakerFailures: 2, BreakerCooldown: time.Minute, Now: clock},
		reply{status: 500, body: errorBody("boom")})
	m := userMsg("m-1", "I live in Berlin.")
	checkFallback(t, r, m, reasonHTTP, 0)
	checkFallback(t, r, m, reasonHTTP, 1)
	if !strings.Contains(r.logs.String(), "keeps failing") {
		t.Fatalf("no warning that calls are paused:\n%s", r.logs.String())
	}
	cands, _ := r.ex.Extract(m) // paused: the rules answer without a call
	if r.fake.calls() != 2 || r.fallbacks(t, reasonBreaker) != 1 || len(cands) != 1 {
		t.Fatalf("calls %d, breaker fallbacks %v, candidates %+v", r.fake.calls(), r.fallbacks(t, reasonBreaker), cands)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	r.fake.script(reply{content: answer(fact("user", "lives_in", "Berlin", "user lives in Berlin", "positive", false))})
	r.ex.Extract(m)
	r.ex.Extract(m)
	if r.fake.calls() != 4 || r.successes(t) != 2 {
		t.Fatalf("after the cooldown: calls %d, successes %v", r.fake.calls(), r.successes(t))
	}
}

// Schema violations are the model's answer to one message, not a provider outage.
func TestSchemaViolationsDoNotPauseCalls(t *testing.T) {
	r := newRig(t, Options{}, ExtractorOptions{BreakerFailures: 1}, reply{content: `{"facts":[],"extra":1}`})
	for range 3 {
		r.ex.Extract(userMsg("m-1", "I live in Berlin."))
	}
	if r.fake.calls() != 3 || r.fallbacks(t, reasonBreaker) != 0 {
		t.Fatalf("calls %d, breaker fallbacks %v", r.fake.calls(), r.fallbacks(t, reasonBreaker))
	}
}

func TestExtractConcurrent(t *testing.T) {
	r := newRig(t, Options{}, ExtractorOptions{},
		reply{content: answer(fact("user", "likes", "tea", "user likes tea", "positive", false))})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if c, _ := r.ex.Extract(userMsg("m", "I like tea.")); len(c) != 1 {
				t.Errorf("goroutine %d: %+v", i, c)
			}
		})
	}
	wg.Wait()
	if r.successes(t) != 8 {
		t.Fatalf("successes %v, want 8", r.successes(t))
	}
}

// Two extractors on one registry share the counters instead of failing to register.
func TestMetricsShareRegistry(t *testing.T) {
	r := newRig(t, Options{}, ExtractorOptions{}, reply{content: answer()})
	c, _ := New(Options{BaseURL: r.fake.url(), Model: "m"})
	ex2, err := NewExtractor(ExtractorOptions{Client: c, Registerer: r.reg})
	if err != nil {
		t.Fatal(err)
	}
	r.ex.Extract(userMsg("m-1", "Hello there."))
	ex2.Extract(userMsg("m-2", "Hello there."))
	if r.successes(t) != 2 {
		t.Fatalf("successes %v, want 2", r.successes(t))
	}
}
