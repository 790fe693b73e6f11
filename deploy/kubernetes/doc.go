// Package kubernetes holds warren's Kubernetes manifests (*.yaml) and the
// test that decodes them into k8s.io/api types and checks the invariants a
// fleet needs (docs/fleet.md "Kubernetes"). No code ships from here.
package kubernetes
