package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// userPath fills {user_id} (and {run_id}, {signal} when given as pairs) into a route.
func userPath(route, user string, more ...string) (string, error) {
	if user == "" {
		return "", memory.FieldError("user_id", "required")
	}
	p := strings.Replace(route, "{user_id}", url.PathEscape(user), 1)
	for i := 0; i+1 < len(more); i += 2 {
		if more[i+1] == "" {
			return "", memory.FieldError(strings.Trim(more[i], "{}"), "required")
		}
		p = strings.Replace(p, more[i], url.PathEscape(more[i+1]), 1)
	}
	return p, nil
}

// Append adds messages to the working session run of user and returns the session's state.
func (c *Client) Append(ctx context.Context, user, run string, req apiv1.AppendRequest) (apiv1.SessionState, error) {
	var out apiv1.SessionState
	p, err := userPath(apiv1.PathSessionMessages, user, "{run_id}", run)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, req, &out)
	}
	return out, err
}

// Session returns the working session run of user.
func (c *Client) Session(ctx context.Context, user, run string) (apiv1.SessionState, error) {
	var out apiv1.SessionState
	p, err := userPath(apiv1.PathSession, user, "{run_id}", run)
	if err == nil {
		err = c.doFor(ctx, user, "GET", p, nil, nil, &out)
	}
	return out, err
}

// Flush consolidates what the session holds (the pre-compaction flush); the session stays.
func (c *Client) Flush(ctx context.Context, user, run string) (apiv1.ConsolidationResult, error) {
	return c.consolidateSession(ctx, apiv1.PathSessionFlush, user, run)
}

// EndSession consolidates the session and drops it.
func (c *Client) EndSession(ctx context.Context, user, run string) (apiv1.ConsolidationResult, error) {
	return c.consolidateSession(ctx, apiv1.PathSessionEnd, user, run)
}

func (c *Client) consolidateSession(ctx context.Context, route, user, run string) (apiv1.ConsolidationResult, error) {
	var out apiv1.ConsolidationResult
	p, err := userPath(route, user, "{run_id}", run)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, struct{}{}, &out)
	}
	return out, err
}

// Remember is the explicit signal: remember text for user (at, when not zero, is when it was said).
func (c *Client) Remember(ctx context.Context, user, text string, at time.Time) (apiv1.ConsolidationResult, error) {
	var out apiv1.ConsolidationResult
	req := apiv1.RememberRequest{Text: text}
	if !at.IsZero() {
		req.Time = &at
	}
	p, err := userPath(apiv1.PathRemember, user)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, req, &out)
	}
	return out, err
}

// Facts lists user's current facts, or every fact with all, or those believed at asOf when not zero.
func (c *Client) Facts(ctx context.Context, user string, all bool, asOf time.Time) ([]apiv1.Fact, error) {
	var out apiv1.FactsResponse
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	if !asOf.IsZero() {
		q.Set("as_of", asOf.UTC().Format(time.RFC3339Nano))
	}
	p, err := userPath(apiv1.PathFacts, user)
	if err == nil {
		err = c.doFor(ctx, user, "GET", p, q, nil, &out)
	}
	return out.Facts, err
}

// History lists the recorded changes of user's memories, or of memoryID when not empty, oldest first.
func (c *Client) History(ctx context.Context, user, memoryID string) ([]apiv1.HistoryEvent, error) {
	var out apiv1.HistoryResponse
	q := url.Values{}
	if memoryID != "" {
		q.Set("memory_id", memoryID)
	}
	p, err := userPath(apiv1.PathHistory, user)
	if err == nil {
		err = c.doFor(ctx, user, "GET", p, q, nil, &out)
	}
	return out.Events, err
}

// Perceive stores samples of one signal and returns the anomalies that became episodes.
func (c *Client) Perceive(ctx context.Context, user string, req apiv1.SignalsRequest) (apiv1.SignalsResponse, error) {
	var out apiv1.SignalsResponse
	p, err := userPath(apiv1.PathSignals, user)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, req, &out)
	}
	return out, err
}

// Daily returns a signal's daily aggregates.
func (c *Client) Daily(ctx context.Context, user, signal string) (apiv1.AggregatesResponse, error) {
	var out apiv1.AggregatesResponse
	p, err := userPath(apiv1.PathAggregates, user, "{signal}", signal)
	if err == nil {
		err = c.doFor(ctx, user, "GET", p, nil, nil, &out)
	}
	return out, err
}

// Consolidate runs pattern consolidation for user now.
func (c *Client) Consolidate(ctx context.Context, user string) (apiv1.ConsolidateResponse, error) {
	var out apiv1.ConsolidateResponse
	p, err := userPath(apiv1.PathConsolidate, user)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, struct{}{}, &out)
	}
	return out, err
}

// CorrectPattern records a user correction of the pattern key.
func (c *Client) CorrectPattern(ctx context.Context, user, key string) (apiv1.ConsolidateResponse, error) {
	var out apiv1.ConsolidateResponse
	p, err := userPath(apiv1.PathPatternCorrect, user)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, apiv1.CorrectRequest{Key: key}, &out)
	}
	return out, err
}

// Graph returns the subgraph of user's current facts within depth hops of concept.
func (c *Client) Graph(ctx context.Context, user, concept string, depth int) (apiv1.GraphResponse, error) {
	var out apiv1.GraphResponse
	q := url.Values{"concept": {concept}, "depth": {strconv.Itoa(depth)}}
	p, err := userPath(apiv1.PathGraph, user)
	if err == nil {
		err = c.doFor(ctx, user, "GET", p, q, nil, &out)
	}
	return out, err
}

// Context runs the retrieval pipeline for user and returns the packaged context.
func (c *Client) Context(ctx context.Context, user string, req apiv1.ContextRequest) (apiv1.ContextResponse, error) {
	var out apiv1.ContextResponse
	p, err := userPath(apiv1.PathContext, user)
	if err == nil {
		err = c.doFor(ctx, user, "POST", p, nil, req, &out)
	}
	return out, err
}

// TierRun moves user's aged hot memories to cold segments now; olderThan ("180d", "4320h") overrides the
// per-type ages when not empty.
func (c *Client) TierRun(ctx context.Context, user, olderThan string) (apiv1.TierRunResponse, error) {
	var out apiv1.TierRunResponse
	err := c.doFor(ctx, user, "POST", apiv1.PathTierRun, nil, apiv1.TierRunRequest{UserID: user, OlderThan: olderThan}, &out)
	return out, err
}

// TierStatus returns user's hot and cold counts and bytes per memory type.
func (c *Client) TierStatus(ctx context.Context, user string) (apiv1.TierStatusResponse, error) {
	var out apiv1.TierStatusResponse
	err := c.doFor(ctx, user, "GET", apiv1.PathTierStatus, url.Values{"user_id": {user}}, nil, &out)
	return out, err
}
