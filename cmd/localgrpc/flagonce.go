package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pflag lets a single-valued flag given twice keep the last value
// silently: `call --address A --address B` calls B. Every such flag of
// every command is wrapped in a onceValue, whose second Set fails; pflag
// names the flag in the error, which run reports as a usage error. Flags
// that take several values (slices, arrays: --cpu, -o) and counters stay
// repeatable.

// onceValue is a flag's value that can be set once.
type onceValue struct {
	pflag.Value
	set   bool
	first string
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return fmt.Errorf("given again: it takes one value, and was given %q already", v.first)
	}
	v.set, v.first = true, s
	return v.Value.Set(s)
}

// setOnce wraps every single-valued flag of cmd and its subcommands.
func setOnce(cmd *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		if _, many := f.Value.(pflag.SliceValue); many || f.Value.Type() == "count" {
			return
		}
		if _, done := f.Value.(*onceValue); !done {
			f.Value = &onceValue{Value: f.Value}
		}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		setOnce(c)
	}
}
