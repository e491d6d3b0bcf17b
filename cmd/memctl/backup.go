package main

import "github.com/spf13/cobra"

func newBackupCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Back up, restore, verify and list whole-cluster backups",
		Long: `A backup holds every shard at a raft read barrier on its leader, the shard map, the members, the format
versions and the external cold segments, with a checksum per part and for the whole file. Locations are a
path, file:///path or s3://bucket/key?region=…&endpoint=… (gocloud.dev/blob).`,
	}
	cmd.AddCommand(newBackupCreateCmd(g), newBackupRestoreCmd(g), newBackupVerifyCmd(g), newBackupListCmd(g))
	return cmd
}
