package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// Perceptual samples live in the user's 'p' side space: "s/<signal>/<time, 16 hex digits of unix nanos>" ->
// value, so one signal's samples are contiguous and in time order; "a/<signal>/<day>" marks an anomaly that
// already became an episode, so a day is reported once however often its samples are re-sent.
var signalName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

func sampleKey(signal string, t time.Time) string {
	return "s/" + signal + "/" + hex.EncodeToString(binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())))
}

func anomalyKey(signal string, day time.Time) string {
	return "a/" + signal + "/" + day.Format("2006-01-02")
}

type storedSample struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

func (s *Server) handleSignals(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.SignalsRequest]) {
	user, req := c.user, c.body
	if err := validateSignals(req); err != nil {
		s.fail(w, r, err)
		return
	}
	var res apiv1.SignalsResponse
	done := s.transact(w, r, user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		res = apiv1.SignalsResponse{UserID: user, Signal: req.Signal, Stored: len(req.Samples), Anomalies: []memory.Memory{}}
		return s.perceive(ctx, shard, t, req, &res)
	})
	if done {
		writeJSON(w, http.StatusOK, res)
	}
}

func validateSignals(req apiv1.SignalsRequest) error {
	if !signalName.MatchString(req.Signal) {
		return memory.FieldError("signal", "want 1-64 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit; got %q", req.Signal)
	}
	if len(req.Samples) == 0 || len(req.Samples) > apiv1.MaxSamples {
		return memory.FieldError("samples", "give 1 to %d samples", apiv1.MaxSamples)
	}
	for i, sm := range req.Samples {
		if math.IsNaN(sm.Value) || math.IsInf(sm.Value, 0) {
			return memory.FieldError(fmt.Sprintf("samples[%d].value", i), "must be a finite number")
		}
	}
	return nil
}

// perceive stores the samples and turns each new anomaly among the days they touch into an episode, with that
// day's samples as evidence.
func (s *Server) perceive(ctx context.Context, shard uint32, t *userTxn, req apiv1.SignalsRequest, res *apiv1.SignalsResponse) error {
	old, err := s.readSamples(ctx, shard, t, req.Signal)
	if err != nil {
		return err
	}
	touched := map[string]bool{}
	all := old
	for _, sm := range req.Samples {
		at := t.now
		if sm.Time != nil {
			at = sm.Time.UTC()
		}
		if err := t.setSide(storage.SpaceSamples, sampleKey(req.Signal, at), storedSample{T: at, V: sm.Value}); err != nil {
			return err
		}
		all = append(all, consolidation.Sample{Signal: req.Signal, Time: at, Value: sm.Value})
		touched[at.Format("2006-01-02")] = true
	}
	aggs, err := consolidation.Aggregate(all, time.UTC)
	if err != nil {
		return memory.FieldError("samples", "%v", err)
	}
	anoms, err := consolidation.DetectAnomalies(aggs, s.opts.Model.Perceptual)
	if err != nil {
		return err
	}
	marked, err := s.c.ReadSide(ctx, shard, storage.SpaceSamples, t.user, "a/"+req.Signal+"/", 0, false)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, kv := range marked.Items {
		seen[kv.Key] = true
	}
	for _, a := range anoms {
		key := anomalyKey(req.Signal, a.Day)
		if !touched[a.Day.Format("2006-01-02")] || seen[key] {
			continue
		}
		m := s.anomalyMemory(t, a, all)
		t.puts = append(t.puts, m)
		res.Anomalies = append(res.Anomalies, m)
		if err := t.setSide(storage.SpaceSamples, key, m.ID); err != nil {
			return err
		}
		if err := t.history(m.ID, "ADD", nil, map[string]any{"text": m.Text, "type": m.Type}, "anomaly: "+a.Direction); err != nil {
			return err
		}
		s.metrics.triggers.WithLabelValues("anomaly").Inc()
	}
	return nil
}

func (s *Server) anomalyMemory(t *userTxn, a consolidation.Anomaly, samples []consolidation.Sample) memory.Memory {
	ep := a.Episode(s.opts.Model.Perceptual)
	var evidence []storedSample
	for _, sm := range samples {
		if !sm.Time.Before(ep.Start) && sm.Time.Before(ep.End) && len(evidence) < 50 {
			evidence = append(evidence, storedSample{T: sm.Time, V: sm.Value})
		}
	}
	ev, _ := json.Marshal(evidence)
	return memory.Memory{ID: s.ids.New(t.now), UserID: t.user, Type: memory.Episodic, Text: ep.Summary,
		OccurredAt: ep.Start, CreatedAt: t.now, Tags: ep.Tags, Entities: ep.Entities, Importance: ep.Importance,
		Metadata: map[string]string{memory.MetaSource: "perceptual", "signal": a.Signal, "evidence": string(ev),
			"z": fmt.Sprintf("%.2f", a.Z), "baseline_median": fmt.Sprintf("%.4g", a.Median)}}
}

func (s *Server) readSamples(ctx context.Context, shard uint32, t *userTxn, signal string) ([]consolidation.Sample, error) {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceSamples, t.user, "s/"+signal+"/", 0, false)
	if err != nil {
		return nil, err
	}
	t.observe(rd.Rev)
	out := make([]consolidation.Sample, 0, len(rd.Items))
	for _, kv := range rd.Items {
		var sm storedSample
		if err := json.Unmarshal(kv.Value, &sm); err != nil {
			return nil, fmt.Errorf("decode sample %s: %w", kv.Key, err)
		}
		out = append(out, consolidation.Sample{Signal: signal, Time: sm.T, Value: sm.V})
	}
	return out, nil
}

func (s *Server) handleAggregates(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	signal := r.PathValue("signal")
	if !signalName.MatchString(signal) {
		writeError(w, http.StatusBadRequest, "invalid_argument", "signal: not a signal name: "+signal, "signal")
		return
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	samples, err := s.readSamples(r.Context(), shard, &userTxn{user: user}, signal)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	aggs, err := consolidation.Aggregate(samples, time.UTC)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := apiv1.AggregatesResponse{UserID: user, Signal: signal, Days: make([]apiv1.DailyAggregate, 0, len(aggs))}
	for _, a := range aggs {
		out.Days = append(out.Days, apiv1.DailyAggregate{Day: a.Day, Count: a.Count, Min: a.Min, Max: a.Max, Mean: a.Mean, P50: a.P50})
	}
	writeJSON(w, http.StatusOK, out)
}
