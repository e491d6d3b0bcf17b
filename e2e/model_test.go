package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

// The memory model's must-show scenarios, on the deterministic path (no LLM), through a real node.

func devNode(t *testing.T) (*client.Client, *proc) {
	t.Helper()
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev")
	c := p.client(t)
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(context.Background()) == nil })
	return c, p
}

func day(n int, hour int) *time.Time {
	t := time.Date(2026, 3, 1, hour, 0, 0, 0, time.UTC).AddDate(0, 0, n)
	return &t
}

func TestModelMorningFlightsBecomeAFact(t *testing.T) {
	c, _ := devNode(t)
	ctx := context.Background()
	var episodes []string
	for i, city := range []string{"Paris", "Berlin", "Rome"} {
		run := fmt.Sprintf("trip-%d", i)
		_, err := c.Append(ctx, "mia", run, apiv1.AppendRequest{Messages: []apiv1.Message{
			{Role: "user", Text: "Please book me the early morning flight to " + city + ", the 7am one", Time: day(i*9, 8)},
			{Role: "assistant", Text: "Booked the 7am flight to " + city + " on the 05.", Time: day(i*9, 8)},
		}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.EndSession(ctx, "mia", run)
		if err != nil || !res.Ended || len(res.Episodes) == 0 {
			t.Fatalf("end %s: %+v %v", run, res, err)
		}
		for _, e := range res.Episodes {
			episodes = append(episodes, e.ID)
		}
	}
	res, err := c.Consolidate(ctx, "mia")
	if err != nil {
		t.Fatal(err)
	}
	facts, err := c.Facts(ctx, "mia", false, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var habit *apiv1.Fact
	for i, f := range facts {
		if strings.Contains(f.Statement, "morning") && strings.Contains(f.Statement, "flight") {
			habit = &facts[i]
		}
	}
	if habit == nil {
		t.Fatalf("no morning-flight fact after consolidation: %+v; patterns %+v", facts, res.Patterns)
	}
	// A statement a person would write, valid from the first time the habit was seen.
	if habit.Confidence < 0.5 || habit.Status != "current" || habit.Statement != "user often books early morning flight (7am)" ||
		!habit.ValidFrom.Equal(*day(0, 8)) {
		t.Fatalf("fact %+v", habit)
	}
	for _, id := range episodes {
		if !slices.Contains(habit.Provenance, id) {
			t.Fatalf("provenance %v does not name episode %s", habit.Provenance, id)
		}
	}
}

func TestModelSupersessionRetractionAndGate(t *testing.T) {
	c, _ := devNode(t)
	ctx := context.Background()
	say := func(run, text string, at *time.Time) apiv1.ConsolidationResult {
		t.Helper()
		if _, err := c.Append(ctx, "noa", run, apiv1.AppendRequest{Messages: []apiv1.Message{{Role: "user", Text: text, Time: at}}}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Flush(ctx, "noa", run)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	decisions := func(res apiv1.ConsolidationResult) []string {
		var ops []string
		for _, f := range res.Facts {
			ops = append(ops, f.Decision)
		}
		return ops
	}
	if got := decisions(say("s1", "I live in Paris.", day(0, 9))); !slices.Equal(got, []string{"ADD"}) {
		t.Fatalf("Paris: %v", got)
	}
	if got := decisions(say("s2", "I moved to Berlin last week.", day(30, 9))); !slices.Equal(got, []string{"UPDATE"}) {
		t.Fatalf("Berlin: %v", got)
	}
	cur, _ := c.Facts(ctx, "noa", false, time.Time{})
	if len(cur) != 1 || !strings.Contains(cur[0].Statement, "Berlin") {
		t.Fatalf("current facts %+v", cur)
	}
	all, _ := c.Facts(ctx, "noa", true, time.Time{})
	var paris *apiv1.Fact
	for i := range all {
		if strings.Contains(all[i].Statement, "Paris") {
			paris = &all[i]
		}
	}
	if paris == nil || paris.Status != "superseded" || paris.ValidTo == nil || paris.SupersededBy != cur[0].ID {
		t.Fatalf("Paris fact %+v", paris)
	}
	hist, err := c.History(ctx, "noa", paris.ID)
	if err != nil || len(hist) != 2 || hist[0].Op != "ADD" || hist[1].Op != "UPDATE" {
		t.Fatalf("Paris history %+v %v", hist, err)
	}
	if got := decisions(say("s3", "I live in Berlin.", day(31, 9))); !slices.Equal(got, []string{"NONE"}) {
		t.Fatalf("Berlin again: %v", got)
	}
	// Retraction.
	if got := decisions(say("s4", "I have a cat named Tom.", day(32, 9))); !slices.Equal(got, []string{"ADD"}) {
		t.Fatalf("cat: %v", got)
	}
	res := say("s5", "I no longer have a cat.", day(40, 9))
	if got := decisions(res); !slices.Equal(got, []string{"DELETE"}) {
		t.Fatalf("no cat: %v", got)
	}
	catID := res.Facts[0].Target
	hist, _ = c.History(ctx, "noa", catID)
	if len(hist) == 0 || hist[len(hist)-1].Op != "DELETE" {
		t.Fatalf("cat history %+v", hist)
	}
	// The write gate: a transient state is no fact.
	res = say("s6", "I'm hungry right now.", day(41, 9))
	if len(res.Facts) != 0 || len(res.Rejected) == 0 {
		t.Fatalf("hungry: %+v", res)
	}
	// Not even when asked to remember it: it is kept as an episode, and the answer says so.
	res, err = c.Remember(ctx, "noa", "I'm hungry right now", *day(42, 9))
	if err != nil || len(res.Facts) != 0 || len(res.Episodes) != 1 || len(res.Rejected) != 1 ||
		res.Rejected[0].Kept != "episode" || res.Rejected[0].KeptID != res.Episodes[0].ID {
		t.Fatalf("remember hungry: %+v %v", res, err)
	}
	// Valid time follows the event: a retraction dated in the past ends the fact then, though it is
	// recorded now.
	if got := decisions(say("s7", "I have a dog.", day(43, 9))); !slices.Equal(got, []string{"ADD"}) {
		t.Fatalf("dog: %v", got)
	}
	res, err = c.Remember(ctx, "noa", "I no longer have a dog", *day(50, 10))
	if err != nil || len(res.Facts) != 1 || res.Facts[0].Decision != "DELETE" {
		t.Fatalf("no dog: %+v %v", res, err)
	}
	all, _ = c.Facts(ctx, "noa", true, time.Time{})
	for _, f := range all {
		if f.ID == res.Facts[0].Target && (f.ValidTo == nil || !f.ValidTo.Equal(*day(50, 10)) || f.EndedAt == nil ||
			!f.EndedAt.After(*day(50, 10))) {
			t.Fatalf("dog fact %+v: want valid_to at the event and ended_at when recorded", f)
		}
	}
	// Retired facts stay out of search unless asked for.
	zero := 0.0
	sr, err := c.Search(ctx, apiv1.SearchRequest{UserID: "noa", Query: "lives in Paris", MinScore: &zero, Types: []string{"semantic"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range sr.Results {
		if h.ID == paris.ID {
			t.Fatalf("superseded fact returned by a default search: %+v", h)
		}
	}
}

func TestModelSleepAnomalyIsSearchable(t *testing.T) {
	c, _ := devNode(t)
	ctx := context.Background()
	var samples []apiv1.Sample
	for d := 0; d < 14; d++ {
		samples = append(samples, apiv1.Sample{Time: day(d, 7), Value: 7.3 + 0.1*float64(d%4)})
	}
	for d := 14; d < 17; d++ {
		samples = append(samples, apiv1.Sample{Time: day(d, 7), Value: 4.0 + 0.1*float64(d%2)})
	}
	res, err := c.Perceive(ctx, "ola", apiv1.SignalsRequest{Signal: "sleep", Samples: samples})
	if err != nil || res.Stored != 17 || len(res.Anomalies) == 0 {
		t.Fatalf("perceive: %+v %v", res, err)
	}
	// Re-sending the same samples reports no new anomaly.
	again, err := c.Perceive(ctx, "ola", apiv1.SignalsRequest{Signal: "sleep", Samples: samples[14:]})
	if err != nil || len(again.Anomalies) != 0 {
		t.Fatalf("re-sent samples made anomalies again: %+v %v", again, err)
	}
	zero := 0.0
	sr, err := c.Search(ctx, apiv1.SearchRequest{UserID: "ola", Query: "sleep", MinScore: &zero})
	if err != nil || len(sr.Results) == 0 || sr.Results[0].ID != res.Anomalies[0].ID && !slices.ContainsFunc(sr.Results,
		func(r apiv1.SearchResult) bool { return r.ID == res.Anomalies[0].ID }) {
		t.Fatalf("search for sleep: %+v %v", sr, err)
	}
	daily, err := c.Daily(ctx, "ola", "sleep")
	if err != nil || len(daily.Days) != 17 {
		t.Fatalf("daily: %+v %v", daily, err)
	}
	// The context pipeline puts the anomaly in its perceptual block for a measure question.
	cres, err := c.Context(ctx, "ola", apiv1.ContextRequest{Query: "How did I sleep recently?", Now: day(17, 12)})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range cres.Blocks {
		for _, it := range b.Items {
			found = found || (b.Kind == "perceptual" && it.ID == res.Anomalies[0].ID)
		}
	}
	if !found {
		t.Fatalf("no anomaly in the perceptual block:\n%s", cres.Text)
	}
}

func TestModelGroupSessionSeesNoPrivateMemory(t *testing.T) {
	c, p := devNode(t)
	ctx := context.Background()
	priv, err := c.Put(ctx, apiv1.PutRequest{UserID: "pia", Text: "pia's private diary about the garden"})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := c.Put(ctx, apiv1.PutRequest{UserID: "pia", Text: "team garden schedule", Scope: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	for _, mode := range []string{"hybrid", "pipeline"} {
		sr, err := c.Search(ctx, apiv1.SearchRequest{UserID: "pia", Query: "garden", MinScore: &zero, Mode: mode,
			SessionType: apiv1.SessionGroup})
		if err != nil {
			t.Fatal(err)
		}
		if len(sr.Results) != 1 || sr.Results[0].ID != shared.ID {
			t.Fatalf("%s group search: %+v", mode, sr.Results)
		}
	}
	resp, err := http.Get("http://" + p.http + "/v1/memories/" + priv.ID + "?user_id=pia&session_type=group")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("group get of a private memory: %d", resp.StatusCode)
	}
}

func TestModelBadInputIsRejectedWhole(t *testing.T) {
	c, p := devNode(t)
	ctx := context.Background()
	var ae *client.APIError
	_, err := c.Append(ctx, "quinn", "r", apiv1.AppendRequest{Messages: []apiv1.Message{
		{Role: "user", Text: "I live in Oslo."}, {Role: "robot", Text: "beep"}}})
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "messages[1].role") {
		t.Fatalf("unknown role: %v", err)
	}
	if _, err := c.Session(ctx, "quinn", "r"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("a rejected append stored a session: %v", err)
	}
	_, err = c.Append(ctx, "quinn", "r", apiv1.AppendRequest{Messages: []apiv1.Message{{Role: "user", Text: "  "}}})
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "messages[0].text") {
		t.Fatalf("empty text: %v", err)
	}
	_, err = c.Perceive(ctx, "quinn", apiv1.SignalsRequest{Signal: "Heart Rate!", Samples: []apiv1.Sample{{Value: 1}}})
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "signal") {
		t.Fatalf("bad signal name: %v", err)
	}
	resp, err := http.Post("http://"+p.http+"/v1/users/quinn/signals", "application/json",
		strings.NewReader(`{"signal":"steps","samples":[{"value":"many"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("non-numeric value: %d", resp.StatusCode)
	}
	if _, err := c.Flush(ctx, "quinn", "nobody-s-run"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("flush of a missing session: %v", err)
	}
	if _, err := c.Remember(ctx, "quinn", "", time.Time{}); !errors.As(err, &ae) || ae.Status != 400 {
		t.Fatalf("empty remember: %v", err)
	}
	if daily, err := c.Daily(ctx, "quinn", "steps"); err != nil || len(daily.Days) != 0 {
		t.Fatalf("a rejected sample was stored: %+v %v", daily, err)
	}
}

// TestModelIdleSessionIsConsolidated: a session idle past --session-ttl is ended by its shard leader's sweeper:
// its messages become episodes and facts, and the session is gone.
func TestModelIdleSessionIsConsolidated(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev", "--session-ttl", "2s", "--session-sweep", "300ms")
	c := p.client(t)
	ctx := context.Background()
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	if _, err := c.Append(ctx, "tia", "idle", apiv1.AppendRequest{Messages: []apiv1.Message{
		{Role: "user", Text: "I work at Globex as an engineer."}, {Role: "assistant", Text: "Noted, Globex."}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the idle session to be ended", func() bool {
		_, err := c.Session(ctx, "tia", "idle")
		return errors.Is(err, memory.ErrNotFound)
	})
	facts, err := c.Facts(ctx, "tia", false, time.Time{})
	if err != nil || len(facts) == 0 || !strings.Contains(facts[0].Statement, "Globex") {
		t.Fatalf("facts after the idle end: %+v %v", facts, err)
	}
	hist, _ := c.History(ctx, "tia", "")
	if len(hist) == 0 || !strings.HasPrefix(hist[0].Cause, "idle") {
		t.Fatalf("history does not show the idle trigger: %+v", hist)
	}
}
