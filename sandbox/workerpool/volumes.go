package workerpool

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

// Volumes. A volume's record lives in the metadata of one worker, as a
// snapshot's does, and the sandboxes that mount it run there: the worker
// takes the lease, mounts the tree, commits its head and checks whether a
// holder is gone in its own metadata, exactly as in process. A tenant's
// volumes are all created on one worker (the one that already holds some,
// else the tenant's home), so a sandbox that mounts several finds them
// together; names are per tenant, so a create checks every worker for the
// name under one lock. Lookups by name are cached like sandbox ids.

var _ api.VolumeService = (*tenantRouter)(nil)

// volumesOf is the volume half of a worker's client.
func volumesOf(svc api.Service) (api.VolumeService, error) {
	vs, ok := svc.(api.VolumeService)
	if !ok {
		return nil, api.Errorf(errdefs.ErrNotImplemented, "this node's workers have no volumes")
	}
	return vs, nil
}

func (r *tenantRouter) forgetVolume(name string) {
	r.p.mu.Lock()
	delete(r.p.vols, [2]string{r.tenant, name})
	r.p.mu.Unlock()
}

// volumeWorker finds the worker that holds the record of volume name.
func (r *tenantRouter) volumeWorker(ctx context.Context, name string) (*worker, error) {
	k := [2]string{r.tenant, name}
	r.p.mu.RLock()
	i, ok := r.p.vols[k]
	r.p.mu.RUnlock()
	if !ok {
		_, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) (api.Volume, error) {
			vs, err := volumesOf(svc)
			if err != nil {
				return api.Volume{}, err
			}
			return vs.GetVolume(ctx, name)
		})
		var err error
		if i, err = find(errs); err != nil {
			return nil, err
		}
		r.p.mu.Lock()
		r.p.vols[k] = i
		r.p.mu.Unlock()
	}
	return r.p.workers[i], nil
}

// onVolume runs fn on the worker that holds volume name; a NotFound from
// it drops the cached placement.
func onVolume[T any](ctx context.Context, r *tenantRouter, name string, fn func(vs api.VolumeService) (T, error)) (T, error) {
	var zero T
	w, err := r.volumeWorker(ctx, name)
	if err != nil {
		return zero, err
	}
	svc, g, err := w.service(r.tenant)
	if err != nil {
		return zero, err
	}
	vs, err := volumesOf(svc)
	if err != nil {
		return zero, err
	}
	v, err := fn(vs)
	err = w.explain(ctx, err, g)
	if errdefs.IsNotFound(err) {
		r.forgetVolume(name)
	}
	return v, err
}

// CreateVolume creates the volume on the worker that holds the tenant's
// other volumes, else on the tenant's home worker, after checking under
// one lock that no worker has the name (one that has it gets the create,
// and refuses it). Every worker must answer: one
// that is restarting may hold the name (503 then, as for snapshots).
func (r *tenantRouter) CreateVolume(ctx context.Context, req api.VolumeCreate) (api.Volume, error) {
	r.p.volMu.Lock()
	defer r.p.volMu.Unlock()
	vals, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) ([]api.Volume, error) {
		vs, err := volumesOf(svc)
		if err != nil {
			return nil, err
		}
		return vs.ListVolumes(ctx)
	})
	var have []int
	taken := -1
	for i, err := range errs {
		if err != nil {
			return api.Volume{}, err
		}
		for _, v := range vals[i] {
			if v.Name == req.Name {
				taken = i
			}
		}
		if len(vals[i]) > 0 {
			have = append(have, i)
		}
	}
	var w *worker
	if taken >= 0 {
		// The worker that has the name refuses it in its own words (a
		// bad size first, then 409), as in process.
		w = r.p.workers[taken]
	} else if len(have) > 0 {
		w = r.p.workers[r.prefer(have)]
	} else {
		var err error
		if w, err = r.p.place(r.tenant); err != nil {
			return api.Volume{}, err
		}
	}
	svc, g, err := w.service(r.tenant)
	if err != nil {
		return api.Volume{}, err
	}
	vs, err := volumesOf(svc)
	if err != nil {
		return api.Volume{}, err
	}
	v, err := vs.CreateVolume(ctx, req)
	if err != nil {
		return v, w.explain(ctx, err, g)
	}
	r.p.mu.Lock()
	r.p.vols[[2]string{r.tenant, req.Name}] = w.index
	r.p.mu.Unlock()
	return v, nil
}

// prefer picks among workers that can serve a request equally: the
// tenant's home if it is one of them, else the first.
func (r *tenantRouter) prefer(idx []int) int {
	r.p.mu.RLock()
	h, ok := r.p.home[r.tenant]
	r.p.mu.RUnlock()
	if ok && slices.Contains(idx, h) {
		return h
	}
	return idx[0]
}

// ListVolumes merges every worker's list; while one restarts it fails
// with 503 (a short list would read as deleted volumes).
func (r *tenantRouter) ListVolumes(ctx context.Context) ([]api.Volume, error) {
	vals, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) ([]api.Volume, error) {
		vs, err := volumesOf(svc)
		if err != nil {
			return nil, err
		}
		return vs.ListVolumes(ctx)
	})
	out := []api.Volume{}
	seen := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		for _, v := range vals[i] {
			if seen[v.Name] { // a metadata store every worker shares lists it on each
				continue
			}
			seen[v.Name] = true
			r.p.mu.Lock()
			r.p.vols[[2]string{r.tenant, v.Name}] = i
			r.p.mu.Unlock()
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (r *tenantRouter) GetVolume(ctx context.Context, name string) (api.Volume, error) {
	return onVolume(ctx, r, name, func(vs api.VolumeService) (api.Volume, error) { return vs.GetVolume(ctx, name) })
}

func (r *tenantRouter) ResizeVolume(ctx context.Context, name string, size int64) (api.Volume, error) {
	return onVolume(ctx, r, name, func(vs api.VolumeService) (api.Volume, error) { return vs.ResizeVolume(ctx, name, size) })
}

func (r *tenantRouter) DeleteVolume(ctx context.Context, name string) error {
	r.p.volMu.Lock()
	defer r.p.volMu.Unlock()
	_, err := onVolume(ctx, r, name, func(vs api.VolumeService) (struct{}, error) {
		return struct{}{}, vs.DeleteVolume(ctx, name)
	})
	if err == nil {
		r.forgetVolume(name)
	}
	return err
}

// attachWorker is the worker a sandbox that mounts vs (and starts from
// snapshot snap, if any) must be created on: the one holding all those
// records. Volumes found nowhere do not place it (ok false with no error
// when none is found): the tenant's home then answers for them in its
// own words (a bad mount path 422, an unknown volume 404). Records on
// different workers are a 409 naming them; with metadata every worker
// shares, each record is on every worker and any of them will do.
func (r *tenantRouter) attachWorker(ctx context.Context, vs []api.VolumeMount, snap string) (*worker, bool, error) {
	type rec struct{ what, name string }
	var recs []rec
	for _, v := range vs {
		if !slices.Contains(recs, rec{"volume", v.Name}) {
			recs = append(recs, rec{"volume", v.Name})
		}
	}
	if snap != "" {
		recs = append(recs, rec{"snapshot", snap})
	}
	// Fast path: the cached (or looked-up) workers agree.
	idx := -1
	agree := true
	for _, c := range recs {
		var w *worker
		var err error
		if c.what == "snapshot" {
			w, err = r.snapshotWorker(ctx, c.name)
		} else {
			w, err = r.volumeWorker(ctx, c.name)
		}
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if idx >= 0 && idx != w.index {
			agree = false
		}
		idx = w.index
	}
	if idx < 0 {
		return nil, false, nil
	}
	if agree {
		return r.p.workers[idx], true, nil
	}
	// They disagree: ask every worker which records it holds, in case
	// one record is on several (shared metadata) or a cache is stale.
	vals, errs := fanOut(ctx, r.p, r.tenant, func(svc api.Service) ([]bool, error) {
		has := make([]bool, len(recs))
		for j, c := range recs {
			var err error
			if c.what == "snapshot" {
				_, err = svc.GetSnapshot(ctx, c.name)
			} else {
				var vsvc api.VolumeService
				if vsvc, err = volumesOf(svc); err == nil {
					_, err = vsvc.GetVolume(ctx, c.name)
				}
			}
			switch {
			case err == nil:
				has[j] = true
			case !errdefs.IsNotFound(err):
				return nil, err
			}
		}
		return has, nil
	})
	for _, err := range errs {
		if err != nil {
			return nil, false, err
		}
	}
	where := make([][]int, len(recs)) // record j -> the workers holding it
	for i := range vals {
		for j := range recs {
			if vals[i][j] {
				where[j] = append(where[j], i)
			}
		}
	}
	var all []int // the workers holding every record found
	for i := range vals {
		ok := true
		for j := range recs {
			if len(where[j]) > 0 && !vals[i][j] {
				ok = false
			}
		}
		if ok {
			all = append(all, i)
		}
	}
	if len(all) > 0 {
		return r.p.workers[r.prefer(all)], true, nil
	}
	var parts []string
	for j, c := range recs {
		if len(where[j]) == 0 {
			continue
		}
		ws := make([]string, len(where[j]))
		for k, i := range where[j] {
			ws[k] = fmt.Sprint(i)
		}
		parts = append(parts, fmt.Sprintf("%s %q on worker %s", c.what, c.name, strings.Join(ws, ", ")))
	}
	return nil, false, api.Errorf(errdefs.ErrConflict, "a sandbox runs on one worker process and its records are on different ones (%s): attach volumes that live together (create them for this tenant through this server, which keeps a tenant's volumes on one worker)", strings.Join(parts, "; "))
}
