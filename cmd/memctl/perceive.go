package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

type perceiveOptions struct {
	user, signal, value, time, file string
}

func newPerceiveCmd(g *globals) *cobra.Command {
	o := &perceiveOptions{}
	cmd := &cobra.Command{
		Use:   "perceive --user U --signal NAME (--value V [--time T] | --file samples.jsonl)",
		Short: "Store samples of a perceptual signal and print the anomalies that became episodes",
		Long: fmt.Sprintf(`Store samples of one named signal (heart rate, steps, sleep hours...) and print
how many were stored and which days' anomalies became episodic memories.

Give exactly one of --value (one sample, at --time or when the node receives it)
or --file, a JSON Lines file (or "-" for stdin) with one sample per line:
  %s
"time" is optional (default: when the node receives it); blank lines are skipped.
The whole file is read and checked first: a bad line (reported with its line
number) sends nothing.

A file of more than %d samples (the limit of one request) is sent in several
requests, one after another. If one fails, those before it stay stored:
re-sending samples that carry a time overwrites them harmlessly, samples
without one would be stored twice. At most %d samples per file.`,
			sampleLineFormat, apiv1.MaxSamples, maxFileSamples),
		Example: `  memctl perceive --user alice --signal heart_rate --value 72 --time 2026-03-02T08:00:00Z
  memctl perceive --user alice --signal steps --file steps.jsonl -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reqs, err := o.requests(cmd.Flags(), cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := sendSamples(cmd.Context(), c, o.user, reqs)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printSignals(cmd.OutOrStdout(), res)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *perceiveOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringVar(&o.signal, "signal", "", "signal name, e.g. heart_rate (required)")
	f.StringVar(&o.value, "value", "", "one sample's value, a number")
	f.StringVar(&o.time, "time", "", "when --value was measured, RFC 3339 (default: when the node receives it)")
	f.StringVar(&o.file, "file", "", `JSON Lines samples file, or "-" for stdin`)
}

// requests validates the flags, reads the samples, and splits them into
// requests the server accepts. in is stdin, for --file -.
func (o *perceiveOptions) requests(fs *pflag.FlagSet, in io.Reader) ([]apiv1.SignalsRequest, error) {
	if err := requireUser(o.user); err != nil {
		return nil, err
	}
	if o.signal == "" {
		return nil, errors.New("--signal is required")
	}
	hasValue, hasFile := fs.Changed("value"), fs.Changed("file")
	switch {
	case hasValue && hasFile:
		return nil, errors.New("--value and --file do not combine: give one")
	case !hasValue && !hasFile:
		return nil, errors.New("give --value (one sample) or --file (JSON Lines samples)")
	case hasFile && o.time != "":
		return nil, errors.New(`--time goes with --value; in --file each line carries its own "time"`)
	}
	var samples []apiv1.Sample
	if hasValue {
		s, err := o.valueSample()
		if err != nil {
			return nil, err
		}
		samples = []apiv1.Sample{s}
	} else {
		var err error
		if samples, err = o.fileSamples(in); err != nil {
			return nil, err
		}
	}
	return chunkSamples(o.signal, samples), nil
}

func (o *perceiveOptions) valueSample() (apiv1.Sample, error) {
	v, err := parseValue(o.value)
	if err != nil {
		return apiv1.Sample{}, err
	}
	s := apiv1.Sample{Value: v}
	if o.time != "" {
		t, err := parseTime("time", o.time)
		if err != nil {
			return apiv1.Sample{}, err
		}
		s.Time = &t
	}
	return s, nil
}

func (o *perceiveOptions) fileSamples(in io.Reader) ([]apiv1.Sample, error) {
	switch o.file {
	case "":
		return nil, errors.New("--file is empty")
	case "-":
		return readSamples(in, "stdin")
	}
	f, err := os.Open(o.file)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	defer f.Close()
	return readSamples(f, o.file)
}

// sendSamples sends the requests in order and merges their responses. On a
// failure it says how many samples were stored before it, since those stay.
func sendSamples(ctx context.Context, c *client.Client, user string, reqs []apiv1.SignalsRequest) (apiv1.SignalsResponse, error) {
	merged := apiv1.SignalsResponse{UserID: user, Anomalies: []memory.Memory{}}
	for i, req := range reqs {
		merged.Signal = req.Signal
		res, err := c.Perceive(ctx, user, req)
		if err != nil {
			if i == 0 {
				return merged, fmt.Errorf("perceive: %w", err)
			}
			return merged, fmt.Errorf("perceive: request %d of %d: %w (the %d samples of the requests before it are stored)",
				i+1, len(reqs), err, merged.Stored)
		}
		merged.UserID, merged.Stored = res.UserID, merged.Stored+res.Stored
		merged.Anomalies = append(merged.Anomalies, res.Anomalies...)
	}
	return merged, nil
}
