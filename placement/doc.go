// Package placement plans where shard replicas and leaders go — repairs, drains, zone spread and balance — as a pure function of the cluster's members and placement.
package placement
