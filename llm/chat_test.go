package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	cases := map[string]Options{
		"no URL":            {Model: "m"},
		"not http":          {BaseURL: "ftp://x/v1", Model: "m"},
		"no model":          {BaseURL: "http://127.0.0.1:1/v1"},
		"temperature":       {BaseURL: "http://127.0.0.1:1/v1", Model: "m", Temperature: 3},
		"negative tokens":   {BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxTokens: -1},
		"backoffs reversed": {BaseURL: "http://127.0.0.1:1/v1", Model: "m", MinBackoff: time.Second, MaxBackoff: time.Millisecond},
	}
	for name, o := range cases {
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err %v, want ErrInvalidOptions", name, err)
		}
	}
	if _, err := NewExtractor(ExtractorOptions{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("extractor without client: err %v", err)
	}
}

func TestCompleteEnvelopeErrors(t *testing.T) {
	cases := map[string]reply{
		"no choices":  {body: `{"id":"x","choices":[],"usage":{}}`},
		"cut short":   {body: `{"choices":[{"message":{"role":"assistant","content":"{\"facts\":["},"finish_reason":"length"}]}`},
		"null":        {body: `{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`},
		"not json":    {body: `<html>gateway</html>`},
		"not an obj":  {body: `[1,2]`},
		"empty body":  {body: ` `},
		"str content": {content: ""},
	}
	f := newFake(t)
	c, err := New(Options{BaseURL: f.url(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for name, rp := range cases {
		f.script(rp)
		if _, err := c.Complete(context.Background(), "s", "u"); !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: err %v, want ErrBadResponse", name, err)
		}
	}
}

func TestCompleteClientErrorNotRetried(t *testing.T) {
	f := newFake(t, reply{status: 400, body: errorBody("model 'nope' not found")})
	c, _ := New(Options{BaseURL: f.url() + "/", Model: "nope"})
	_, err := c.Complete(context.Background(), "s", "u")
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 400 || se.Message != "model 'nope' not found" || !errors.Is(err, ErrHTTPStatus) {
		t.Fatalf("err %v", err)
	}
	if f.calls() != 1 {
		t.Fatalf("%d calls, want 1", f.calls())
	}
}

func TestCompleteSendsMaxTokens(t *testing.T) {
	f := newFake(t, reply{content: `{"facts":[]}`})
	c, _ := New(Options{BaseURL: f.url(), Model: "m", MaxTokens: 512, Temperature: 0.2})
	out, err := c.Complete(context.Background(), "s", "u")
	if err != nil || out != `{"facts":[]}` {
		t.Fatalf("out %q err %v", out, err)
	}
	q := f.requests()[0].req
	if q.MaxTokens != 512 || *q.Temperature != 0.2 || f.requests()[0].auth != "" {
		t.Fatalf("request %+v auth %q", q, f.requests()[0].auth)
	}
}
