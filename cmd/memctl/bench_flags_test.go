package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestBenchValidation(t *testing.T) {
	a := []string{"--addr", unreachable}
	long := strings.Repeat("u", 256)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bare", []string{"bench"}, "missing subcommand"},
		{"unknown sub", []string{"bench", "read"}, `unknown command "read"`},
		{"write arg", []string{"bench", "write", "x"}, `unknown command "x"`},
		{"write clients zero", []string{"bench", "write", "--clients", "0"}, "--clients 0: must be between 1 and 4096"},
		{"write clients huge", []string{"bench", "write", "--clients", "5000"}, "--clients 5000"},
		{"write duration zero", []string{"bench", "write", "--duration", "0s"}, "--duration 0s: must be positive"},
		{"write duration bad", []string{"bench", "write", "--duration", "10"}, "missing unit"},
		{"write warmup negative", []string{"bench", "write", "--warmup", "-1s"}, "--warmup -1s is negative"},
		{"write size zero", []string{"bench", "write", "--size", "0"}, "--size 0: must be between 1 and 32768"},
		{"write size huge", []string{"bench", "write", "--size", "32769"}, "--size 32769"},
		{"write rate negative", []string{"bench", "write", "--rate", "-1"}, "--rate -1: must be between 0 (closed loop) and 1000000"},
		{"write rate huge", []string{"bench", "session", "--rate", "2e6"}, "--rate 2e+06: must be between"},
		{"context rate", []string{"bench", "context", "--rate", "5"}, "--rate is not supported by bench context"},
		{"write users zero", []string{"bench", "write", "--users", "0"}, "--users 0: must be at least 1"},
		{"addr-list empty entry", []string{"bench", "write", "--addr-list", unreachable + ",,http://127.0.0.1:2"}, "--addr-list: empty address"},
		{"addr-list bad scheme", []string{"bench", "write", "--addr-list", "ftp://x"}, "--addr-list: address \"ftp://x\": scheme must be http or https"},
		{"search k zero", []string{"bench", "search", "--k", "0"}, "--k 0: must be between 1 and 1000"},
		{"search k huge", []string{"bench", "search", "--k", "1001"}, "--k 1001"},
		{"search users zero", []string{"bench", "search", "--users", "0"}, "--users 0"},
		{"search memories zero", []string{"bench", "search", "--memories", "0"}, "--memories 0: must be at least 1"},
		{"search load-clients zero", []string{"bench", "search", "--load-clients", "0"}, "--load-clients 0"},
		{"search size zero", []string{"bench", "search", "--size", "0"}, "--size 0"},
		{"search prefix empty", []string{"bench", "search", "--user-prefix", ""}, "--user-prefix is empty"},
		{"search prefix control", []string{"bench", "search", "--user-prefix", "a\tb"}, "control character"},
		{"search prefix too long", []string{"bench", "search", "--user-prefix", long}, "longer than 256 bytes"},
		{"search skip-load memories", []string{"bench", "search", "--skip-load", "--memories", "5"}, "--memories has no effect with --skip-load"},
		{"search skip-load load-clients", []string{"bench", "search", "--skip-load", "--load-clients", "5"}, "--load-clients has no effect"},
		{"search clients zero", []string{"bench", "search", "--skip-load", "--clients", "0"}, "--clients 0"},
		{"search too many", []string{"bench", "search", "--users", "100000", "--memories", "100000"}, "too many"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, nil, "", append(a, tc.args...)...)
			wantErr(t, err, tc.want)
			if out != "" || stderr != "" {
				t.Errorf("output on a flag error: stdout %q stderr %q", out, stderr)
			}
		})
	}
}

func TestBenchAddrs(t *testing.T) {
	got, err := benchAddrs("http://a:1", nil)
	if err != nil || !reflect.DeepEqual(got, []string{"http://a:1"}) {
		t.Fatalf("default: %v %v", got, err)
	}
	got, err = benchAddrs("http://a:1", []string{" http://b:2", "c:3 "})
	if err != nil || !reflect.DeepEqual(got, []string{"http://b:2", "c:3"}) {
		t.Fatalf("list: %v %v", got, err)
	}
	// The flag is comma-separated and repeatable.
	o := &benchWriteOptions{}
	flagsFor(t, o.addFlags, "--addr-list", "http://b:2,http://c:3", "--addr-list", "http://d:4")
	if !reflect.DeepEqual(o.addrList, []string{"http://b:2", "http://c:3", "http://d:4"}) {
		t.Fatalf("addr-list %q", o.addrList)
	}
	if o.clients != benchWriteClients || o.size != 200 || o.users != 1000 || o.duration.String() != "10s" || o.warmup.String() != "1s" {
		t.Errorf("defaults: %+v", o)
	}
}

func TestClientsOf(t *testing.T) {
	// 10 clients round-robin over 3 addresses: 4, 3, 3.
	for i, want := range []int{4, 3, 3} {
		if got := clientsOf(i, 3, 10); got != want {
			t.Errorf("clientsOf(%d, 3, 10) = %d, want %d", i, got, want)
		}
	}
	if got := clientsOf(2, 3, 2); got != 0 {
		t.Errorf("more addresses than clients: %d", got)
	}
}
