package main

import (
	"context"
	"flag"
	"fmt"

	"engram/ingest"
	"engram/ingest/gen"
)

type demoOpts struct {
	common
	turns int
	seed  uint64
}

func demoFlags(e *env) (*flag.FlagSet, *demoOpts) {
	o := &demoOpts{}
	fs := newFlagSet("demo", e)
	o.common.bind(fs)
	fs.IntVar(&o.turns, "turns", 300, "turns to write (three events each: observation, action, outcome)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the deterministic sample")
	return fs, o
}

// runDemo writes a realistic, deterministic sample through the real
// pipeline, so what it shows is what an ingest would have made.
func runDemo(ctx context.Context, e *env, args []string) error {
	fs, o := demoFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	data := dataDir(conf.get("data"), e.getenv)
	st, err := openBackends(ctx, conf, e)
	if err != nil {
		return err
	}
	defer st.Close()
	sum, err := writeDemo(ctx, st, o.turns, o.seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "demo: ingested %d, duplicates %d into %s\n", sum.Ingested, sum.Duplicates, safeLine(data))
	if sum.Rejected+sum.Failed > 0 {
		return fmt.Errorf("demo: %d rejected, %d failed", sum.Rejected, sum.Failed)
	}
	return nil
}

func writeDemo(ctx context.Context, st *backends, turns int, seed uint64) (ingest.Summary, error) {
	p, err := ingest.New(ingest.Config{
		Archive: st.archive, Index: st.index, Publisher: st.topics,
		Embedder: st.embedder, Decode: decodeOptions(),
	})
	if err != nil {
		return ingest.Summary{}, err
	}
	g := gen.New(gen.Config{Seed: seed})
	items := make(chan ingest.Item, 256)
	go func() {
		defer close(items)
		for i := range turns * 3 {
			select {
			case items <- ingest.Item{Src: ingest.Source{File: "demo", Line: i + 1}, Data: g.Next()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return p.Run(ctx, items, nil), nil
}
