package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/storage"
)

// A transaction that reads only side records decides first on unconfirmed reads; one that would answer without a
// commit is decided again on confirmed reads, and one whose commit conflicts is decided again confirmed too. One
// that reads memories reads confirmed from the start.
func TestTransactionReadsUnconfirmedOnlyWhenItCommits(t *testing.T) {
	tn := startTestNode(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errDecided := errors.New("decided to refuse")
	cases := []struct {
		name    string
		outcome func(call int, shard uint32, t *userTxn) error
		reads   txnReads
		want    []bool // unconfirmed, by call
		wantErr error
	}{
		{name: "memories read", reads: readsMemories, want: []bool{false}, outcome: func(_ int, _ uint32, t *userTxn) error {
			return t.setSide(storage.SpaceSessions, "r", sessionRecord{})
		}},
		{name: "commit", want: []bool{true}, outcome: func(_ int, _ uint32, t *userTxn) error {
			return t.setSide(storage.SpaceSessions, "r", sessionRecord{})
		}},
		{name: "nothing to change", want: []bool{true, false}, outcome: func(int, uint32, *userTxn) error {
			return nil
		}},
		{name: "error", want: []bool{true, false}, wantErr: errDecided, outcome: func(int, uint32, *userTxn) error {
			return errDecided
		}},
		{name: "conflict", want: []bool{true, false}, outcome: func(call int, shard uint32, t *userTxn) error {
			if call == 0 { // another writer commits after this decision read
				if err := tn.api.transactCtx(ctx, t.user, readsMemories, func(ctx context.Context, _ uint32, o *userTxn) error {
					if _, _, err := tn.api.readSession(ctx, shard, o, "other"); err != nil {
						return err
					}
					return o.setSide(storage.SpaceSessions, "other", sessionRecord{})
				}); err != nil {
					return err
				}
			}
			return t.setSide(storage.SpaceSessions, "r", sessionRecord{})
		}},
	}
	for _, tc := range cases {
		if tc.want[0] {
			tc.reads = readsSideOnly
		}
		t.Run(tc.name, func(t *testing.T) {
			var got []bool
			err := tn.api.transactCtx(ctx, "txn-"+tc.name, tc.reads, func(ctx context.Context, shard uint32, txn *userTxn) error {
				got = append(got, cluster.IsUnconfirmed(ctx))
				if _, _, err := tn.api.readSession(ctx, shard, txn, "r"); err != nil {
					return err
				}
				return tc.outcome(len(got)-1, shard, txn)
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("transaction: %v, want %v", err, tc.wantErr)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("decided %d times (unconfirmed: %v), want %v", len(got), got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("decisions read unconfirmed %v, want %v", got, tc.want)
				}
			}
		})
	}
}
