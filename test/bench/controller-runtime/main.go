// The controller-runtime contender of `npm run bench:runtime` (test/bench/runtime.mjs): what
// runtime-child.mjs does, written as a kubebuilder project would write it in Go. A manager (metrics and
// probes served, a zap logger at info, leader election off) with a controller for the Widget kind whose
// reconciler reads each object through mgr.GetClient().Get (from the cache, a deep copy), 4 at a time,
// against the API server of the kubeconfig given. Its cache drops managedFields, as the runtime's does.
//
// Usage: controller-runtime-bench <kubeconfig> <count>. Prints the JSON line of measurement.mjs's
// writeMeasurement (same keys, same units). With a count of 0 it prints "synced" once its cache has synced,
// then {"rssMiB": ..., "cpuMs": ...} (its RSS after a GC, its CPU time until "synced"), and exits: the
// lean-start row of runtime.mjs.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// WidgetSpec is the spec runtime.mjs creates: replicas, an image and an 800-byte note.
type WidgetSpec struct {
	Replicas int64  `json:"replicas"`
	Image    string `json:"image"`
	Note     string `json:"note"`
}

// Widget is bench.example.com/v1 Widget, typed as a kubebuilder project types its kinds.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyObject is what controller-gen's object generator writes.
func (in *Widget) DeepCopyObject() k8sruntime.Object {
	out := new(Widget)
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// DeepCopyObject is what controller-gen's object generator writes.
func (in *WidgetList) DeepCopyObject() k8sruntime.Object {
	out := new(WidgetList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Widget, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].DeepCopyObject().(*Widget)
		}
	}
	return out
}

var groupVersion = schema.GroupVersion{Group: "bench.example.com", Version: "v1"}

// memory is process.memoryUsage()'s rss and heapUsed, after a GC: the resident set and the live heap.
func memory() (rss uint64, heap uint64) {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	statm, err := os.ReadFile("/proc/self/statm")
	if err == nil {
		var size, resident uint64
		if _, err := fmt.Sscan(string(statm), &size, &resident); err == nil {
			rss = resident * uint64(os.Getpagesize())
		}
	}
	return rss, stats.HeapAlloc
}

// cpuMicros is process.cpuUsage()'s user + system, all threads, in microseconds.
func cpuMicros() float64 {
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1000
}

// gcPauseMs is the total of the GC pauses so far, in milliseconds.
func gcPauseMs() float64 {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return float64(stats.PauseTotalNs) / 1e6
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

const mib = 1 << 20

// reconciler marks each Widget it has read from the cache; the last one closes allSeen.
type reconciler struct {
	client   ctrl.Manager
	count    int
	mu       sync.Mutex
	seen     map[types.NamespacedName]struct{}
	first    time.Time
	firstCPU float64
	firstGC  float64
	allSeen  chan struct{}
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	if r.first.IsZero() {
		r.first = time.Now()
		r.firstCPU = cpuMicros()
		r.firstGC = gcPauseMs()
	}
	r.mu.Unlock()
	var widget Widget
	if err := r.client.GetClient().Get(ctx, req.NamespacedName, &widget); err != nil {
		return ctrl.Result{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[req.NamespacedName] = struct{}{}
	if len(r.seen) == r.count {
		close(r.allSeen)
	}
	return ctrl.Result{}, nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "controller-runtime bench: %v\n", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fail(fmt.Errorf("usage: %s <kubeconfig> <count>", os.Args[0]))
	}
	count, err := strconv.Atoi(os.Args[2])
	if err != nil || count < 0 {
		fail(fmt.Errorf("count %q is not a number of objects", os.Args[2]))
	}
	config, err := clientcmd.BuildConfigFromFlags("", os.Args[1])
	if err != nil {
		fail(err)
	}
	scheme := k8sruntime.NewScheme()
	scheme.AddKnownTypes(groupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, groupVersion)

	rssIdle, heapIdle := memory()
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 zap.New(zap.WriteTo(io.Discard), zap.JSONEncoder()),
		Metrics:                metricsserver.Options{BindAddress: "127.0.0.1:0"},
		HealthProbeBindAddress: "127.0.0.1:0",
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		fail(err)
	}
	_ = mgr.AddHealthzCheck("healthz", healthz.Ping)
	_ = mgr.AddReadyzCheck("readyz", healthz.Ping)
	started := time.Now()

	r := &reconciler{client: mgr, count: count, seen: map[types.NamespacedName]struct{}{}, allSeen: make(chan struct{})}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Widget{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// Opened before the start, so that WaitForCacheSync waits for it (the controller shares it).
	if _, err := mgr.GetCache().GetInformer(ctx, &Widget{}); err != nil {
		fail(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fail(fmt.Errorf("the cache did not sync"))
	}
	synced := time.Now()
	if count == 0 {
		cpu := cpuMicros()
		fmt.Println("synced")
		rss, _ := memory()
		out, _ := json.Marshal(map[string]float64{"rssMiB": float64(rss) / mib, "cpuMs": cpu / 1000})
		fmt.Println(string(out))
		os.Exit(0)
	}
	select {
	case <-r.allSeen:
	case err := <-stopped:
		fail(fmt.Errorf("the manager stopped: %v", err))
	}
	reconciled := time.Now()
	r.mu.Lock()
	first, firstCPU, firstGC := r.first, r.firstCPU, r.firstGC
	r.mu.Unlock()
	drainCPU := cpuMicros() - firstCPU
	drainGC := gcPauseMs() - firstGC
	rssLoaded, heapLoaded := memory()

	// Reads through mgr.GetClient(): from the cache, each a deep copy.
	const reads = 20_000
	readStarted := time.Now()
	for i := 0; i < reads; i++ {
		var widget Widget
		key := types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("widget-%d", i%count)}
		if err := mgr.GetClient().Get(ctx, key, &widget); err != nil {
			fail(err)
		}
	}
	cacheGetNs := float64(time.Since(readStarted).Nanoseconds()) / reads
	cancel()
	if err := <-stopped; err != nil {
		fail(err)
	}
	out, _ := json.Marshal(map[string]float64{
		"count":          float64(count),
		"syncMs":         ms(synced.Sub(started)),
		"reconcileAllMs": ms(reconciled.Sub(started)),
		"drainMs":        ms(reconciled.Sub(first)),
		"rssIdleMiB":     float64(rssIdle) / mib,
		"rssLoadedMiB":   float64(rssLoaded) / mib,
		"heapIdleMiB":    float64(heapIdle) / mib,
		"heapLoadedMiB":  float64(heapLoaded) / mib,
		"cacheGetNs":     cacheGetNs,
		"drainGcMs":      drainGC,
		"drainCpuUs":     drainCPU,
	})
	fmt.Println(string(out))
}
