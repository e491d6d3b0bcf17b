package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// chromium finds Debian's chromium, installing it under CI=true; elsewhere the test may skip without it.
func chromium(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") != "true" {
		t.Skip("no chromium on PATH (scripts/install-chromium.sh installs it; under CI=true the test does)")
	}
	if out, err := exec.Command("../scripts/install-chromium.sh").CombinedOutput(); err != nil {
		t.Fatalf("install chromium: %v\n%s", err, out)
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// consoleData loads what the pages show: a searchable memory, facts with one superseded, a signal with an
// anomaly. It returns the id of the fact the browser must find: the current one, with a recorded history.
func consoleData(t *testing.T, c *client.Client) string {
	t.Helper()
	ctx := context.Background()
	for i := range 25 {
		if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "acme-ann", Text: fmt.Sprintf("Standup note %d: reviewed the sprint board", i), Tags: []string{"work"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "acme-ann", Text: "Booked a window seat on the night train to Vienna",
		Tags: []string{"travel"}, Metadata: map[string]string{"source": "console-test"}}); err != nil {
		t.Fatal(err)
	}
	for i, say := range []string{"I live in Paris.", "I moved to Berlin last week."} {
		run := fmt.Sprintf("s%d", i+1)
		msg := apiv1.Message{Role: "user", Text: say, Time: day(30*i, 9)}
		if _, err := c.Append(ctx, "acme-ann", run, apiv1.AppendRequest{Messages: []apiv1.Message{msg}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Flush(ctx, "acme-ann", run); err != nil {
			t.Fatal(err)
		}
	}
	var samples []apiv1.Sample
	for d := range 17 {
		v := 62 + float64(d%3)
		if d >= 14 {
			v = 95
		}
		samples = append(samples, apiv1.Sample{Time: day(d, 7), Value: v})
	}
	if res, err := c.Perceive(ctx, "acme-ann", apiv1.SignalsRequest{Signal: "heart_rate", Samples: samples}); err != nil || len(res.Anomalies) == 0 {
		t.Fatalf("perceive: %+v %v", res, err)
	}
	facts, err := c.Facts(ctx, "acme-ann", false, time.Time{})
	if err != nil || len(facts) != 1 || !strings.Contains(facts[0].Statement, "Berlin") {
		t.Fatalf("current facts: %+v %v", facts, err)
	}
	return facts[0].ID
}

// TestConsoleInABrowser starts three memnode processes, loads memories, facts and a signal, and drives the
// console in headless Chromium through every page, saving a screenshot of each (MEMCLUSTER_CONSOLE_SHOTS
// names the directory; docs/console/ holds the committed ones).
func TestConsoleInABrowser(t *testing.T) {
	needProcesses(t)
	chrome := chromium(t)
	authFile := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(authFile, []byte(authFileConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	procs := []*proc{newProc(t, "n1"), newProc(t, "n2"), newProc(t, "n3")}
	for _, p := range procs {
		p.start("--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "16", "--replicas", "3",
			"--auth-file", authFile, "--cluster-token", tokCluster)
	}
	admin, err := client.New("http://"+procs[0].http, client.WithBearerToken(tokAdmin), client.WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "a healthy 3-node cluster", func() bool {
		st, err := admin.ClusterStatus(context.Background())
		return err == nil && st.Healthy && len(st.Nodes) == 3
	})
	id := consoleData(t, admin)

	shots := os.Getenv("MEMCLUSTER_CONSOLE_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	b := newBrowser(t, chrome, shots)
	base := "http://" + procs[1].http + "/ui/"
	b.run("open the cluster page with the admin token", chromedp.Navigate(base+"#cluster"),
		chromedp.WaitVisible("#token"), chromedp.SendKeys("#token", tokAdmin), chromedp.Click(`#token-form button[type="submit"]`),
		chromedp.WaitVisible("#health.ok"), chromedp.WaitVisible("#nodes tbody tr:nth-child(3)"))
	b.count("#nodes tbody tr", 3)
	b.count("#shards tbody tr", 16)
	b.shot("cluster")

	b.run("open a user's memories", chromedp.Click(`nav a[data-page="memories"]`), chromedp.WaitVisible("#mem-user"),
		chromedp.SendKeys("#mem-user", "acme-ann"),
		chromedp.Poll(`document.getElementById('mem-hint').textContent === '1 users'`, nil), chromedp.Click("#mem-open"), chromedp.WaitVisible("#mem-older:not([disabled])"))
	b.run("find the memory through search", chromedp.SendKeys("#mem-query", "Where do I live now? Berlin"), chromedp.Click("#mem-search-go"),
		chromedp.WaitVisible("#mem-search-count"), chromedp.Click(`button.mem-open[data-id="`+id+`"]`))
	b.run("see its history", chromedp.WaitVisible("#mem-history tbody tr"))
	b.run("draw the facts and the graph", chromedp.Click("#facts-go"), chromedp.WaitVisible("#fact-timeline text.retired"),
		chromedp.Click("#graph-go"), chromedp.WaitVisible("#graph-svg circle"))
	b.contains("#mem-text", "Berlin")
	b.contains("#mem-history", "ADD")
	b.shot("memories")

	b.run("explain a context request", chromedp.Click(`nav a[data-page="explain"]`), chromedp.WaitVisible("#ex-query"),
		chromedp.Click("#ex-open"), chromedp.SendKeys("#ex-query", "Where do I live?"), chromedp.Click("#ex-run"),
		chromedp.WaitVisible("#ex-stages tbody tr"))
	b.contains("#ex-summary", "confidence")
	b.contains("#ex-stages", "plan")
	b.contains("#ex-confidence", "relevance")
	b.shot("explain")
	b.run("explain a search: every candidate's component scores", chromedp.SetValue("#ex-kind", "hybrid"), chromedp.Click("#ex-run"),
		chromedp.Poll(`document.querySelector('#ex-plan')?.textContent.startsWith('hybrid')`, nil))
	b.contains("#ex-candidates", "Berlin")

	b.run("chart tiers and the signal", chromedp.Click(`nav a[data-page="tiers"]`), chromedp.WaitVisible("#tier-cluster"),
		chromedp.WaitVisible("#signal-go"), chromedp.Click("#signal-go"), chromedp.WaitVisible("#signal-svg circle.anomaly"))
	b.shot("tiers")

	// A fresh load with another token in the tab's session: no node of the admin's pages is left to match.
	b.run("a token limited to acme users sees acme-ann and is refused another tenant",
		chromedp.Evaluate(fmt.Sprintf(`sessionStorage.setItem('memcluster.token', %q)`, tokAcmeReader), nil),
		chromedp.Navigate(base+"?as=acme#memories"), chromedp.WaitVisible("#mem-table"),
		chromedp.Clear("#mem-user"), chromedp.SendKeys("#mem-user", "zeta-1"),
		chromedp.Poll(`document.getElementById('mem-hint').textContent.includes('only its own')`, nil),
		chromedp.Click("#mem-open"), chromedp.Poll(`document.getElementById('status').textContent.includes('may not access user')`, nil))
}

// browser is one headless Chromium tab with a deadline; page errors are collected for the failure message.
type browser struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	errors *strings.Builder
}

func newBrowser(t *testing.T, exe, dir string) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1366, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The browser lives as long as the context of the first Run: start it here, without a deadline, so each
	// step's own deadline (run) ends only that step.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &browser{t: t, ctx: ctx, dir: dir, errors: &strings.Builder{}}
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			fmt.Fprintf(b.errors, "page exception: %s\n", e.ExceptionDetails.Error())
		}
	})
	return b
}

// run runs one step of the test, each within its own deadline; a failure shows the page's status line and
// saves a screenshot of where it stopped.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 40*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		var status string
		var png []byte
		_ = chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById('status').textContent`, &status),
			chromedp.FullScreenshot(&png, 100))
		_ = os.WriteFile(filepath.Join(b.dir, "failed.png"), png, 0o644)
		b.t.Fatalf("%s: %v (status line %q; %s)\n%s", what, err, status, filepath.Join(b.dir, "failed.png"), b.errors)
	}
}

func (b *browser) count(sel string, want int) {
	b.t.Helper()
	var n int
	b.run("count "+sel, chromedp.Evaluate(fmt.Sprintf("document.querySelectorAll(%q).length", sel), &n))
	if n != want {
		b.t.Errorf("%s: %d, want %d", sel, n, want)
	}
}

func (b *browser) contains(sel, want string) {
	b.t.Helper()
	var text string
	b.run("read "+sel, chromedp.Evaluate(fmt.Sprintf("document.querySelector(%q).textContent", sel), &text))
	if !strings.Contains(text, want) {
		b.t.Errorf("%s says %q, want %q in it", sel, text, want)
	}
}

func (b *browser) shot(name string) {
	b.t.Helper()
	var png []byte
	b.run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
