package main

import (
	"fmt"
	"os"
	"path"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
)

func init() { verbs = append(verbs, newFSCmd) }

func newFSCmd() *cobra.Command {
	var c conn
	cmd := &cobra.Command{Use: "fs", Short: "read and write a sandbox's files"}
	c.flags(cmd)
	put := &cobra.Command{
		Use: "put ID LOCAL REMOTE", Short: "upload a local file, or a directory's tree (as a tar), to an absolute path in the sandbox", Args: cobra.ExactArgs(3),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if fi, err := os.Stat(args[1]); err == nil && fi.IsDir() {
				return putDir(cmd.Context(), cl, args[0], args[1], args[2])
			}
			f, err := os.Open(args[1])
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			return cl.WriteFile(cmd.Context(), args[0], api.WriteFileRequest{Path: args[2], Data: f, Perm: uint32(fi.Mode().Perm())})
		}),
	}
	cat := &cobra.Command{
		Use: "cat ID PATH", Short: "print a sandbox file", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			data, err := cl.ReadFile(cmd.Context(), args[0], args[1], 0, 0)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		}),
	}
	var recursive bool
	ls := &cobra.Command{
		Use: "ls ID PATH", Short: "list a sandbox directory", Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			fis, err := cl.ListFiles(cmd.Context(), args[0], args[1], api.ListFilesOptions{Recursive: recursive})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, fi := range fis {
				name := fi.Name
				if recursive {
					name = fi.Path
				}
				if fi.Type == "dir" {
					name += "/"
				}
				if fi.Target != "" {
					name += " -> " + fi.Target
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", fi.Mode, fi.Type, fi.Size, name)
			}
			return tw.Flush()
		}),
	}
	ls.Flags().BoolVarP(&recursive, "recursive", "r", false, "list the whole tree")
	get := &cobra.Command{
		Use:   "get ID REMOTE [LOCAL]",
		Short: "download a sandbox file, or a directory's tree, to LOCAL (default: its base name here; - for stdout, a tar for a directory)",
		Args:  cobra.RangeArgs(2, 3),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			local := path.Base(args[1])
			if len(args) == 3 {
				local = args[2]
			}
			return getPath(cmd.Context(), cl, args[0], args[1], local, cmd.OutOrStdout())
		}),
	}
	cmd.AddCommand(put, get, cat, ls)
	return cmd
}
