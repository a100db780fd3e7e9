package main
import "github.com/spf13/cobra"
func (a *app) doctorCommand() *cobra.Command { return &cobra.Command{Use: "doctor"} }
