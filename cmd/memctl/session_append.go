package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
)

type appendOptions struct {
	sessionRef
	role, time, agent string
	taskEnd           bool
}

func newSessionAppendCmd(g *globals) *cobra.Command {
	o := &appendOptions{}
	cmd := &cobra.Command{
		Use:   "append --user U --run R --role user|assistant|tool [flags] TEXT... | -",
		Short: "Add one turn to a working session and print the session's state",
		Long: `Add one turn to the working session R of user U (created by its first turn)
and print one line: messages in the window, token estimate, messages pending
consolidation, and "flush due" once enough wait.

TEXT is the remaining arguments joined by spaces, or "-" to read it from stdin
(a trailing newline is dropped).`,
		Example: `  memctl session append --user alice --run r1 --role user "I moved to Berlin last week"
  memctl session append --user alice --run r1 --role tool --task-end - < result.txt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := o.request(args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			st, err := c.Append(cmd.Context(), o.user, o.run, req)
			if err != nil {
				return fmt.Errorf("session append %s: %w", o.run, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), st)
			}
			return printSessionLine(cmd.OutOrStdout(), st)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *appendOptions) addFlags(f *pflag.FlagSet) {
	o.addRefFlags(f)
	f.StringVar(&o.role, "role", "", "who spoke: user, assistant or tool (required)")
	f.StringVar(&o.time, "time", "", "when it was said, RFC 3339 (default: when the node receives it)")
	f.StringVar(&o.agent, "agent", "", "agent id of the session")
	f.BoolVar(&o.taskEnd, "task-end", false, "this turn completes a task: the next user turn starts a new episode")
}

// request checks the flags and builds the one-message AppendRequest; text
// size limits are the server's.
func (o *appendOptions) request(args []string, in io.Reader) (apiv1.AppendRequest, error) {
	var zero apiv1.AppendRequest
	if err := o.check(); err != nil {
		return zero, err
	}
	switch o.role {
	case "user", "assistant", "tool":
	case "":
		return zero, fmt.Errorf("--role is required: user, assistant or tool")
	default:
		return zero, fmt.Errorf("--role %q: want user, assistant or tool", o.role)
	}
	text, err := textArg(args, in, "TEXT")
	if err != nil {
		return zero, err
	}
	msg := apiv1.Message{Role: o.role, Text: text, TaskEnd: o.taskEnd}
	if o.time != "" {
		t, err := parseTime("time", o.time)
		if err != nil {
			return zero, err
		}
		msg.Time = &t
	}
	return apiv1.AppendRequest{AgentID: o.agent, Messages: []apiv1.Message{msg}}, nil
}
