/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon: `slideops-profiler daemon [--config FILE]`, the DaemonSet mode (SPEC 7,
 * docs/daemon.md). Wiring only: config, Kubernetes (kube.h), the profile store, tokens, the
 * audit trail, the cluster API sink and the local HTTP API around one capture worker
 * (jobs.h) and the capture annotation (annotations.h).
 *
 * Threads: the main thread waits for SIGTERM/SIGINT (blocked everywhere else) and refreshes
 * the gauges; one capture worker runs at most one capture at a time (a second request while
 * one is queued or running is refused with CAPTURE_BUSY_MSG); one request thread acts on the
 * capture annotations kube reports, so the watch thread never waits for a GET or a patch;
 * plus the threads of kube, the sink and the API.
 *
 * Capture requests come from POST /v1/captures and from the annotation
 * profiling.slideops.io/capture on a pod of this node (that pod's Service) or on the node (a
 * whole-server profile). Each is acted on exactly once, also across restarts: before acting,
 * the object's capture-status annotation is read from the API server, and a request whose
 * `request` value it already reports as done, refused or failed is skipped; one it reports as
 * running (the agent died during it) is marked failed.
 */
#ifndef SLIDEOPS_DAEMON_H
#define SLIDEOPS_DAEMON_H

/* How long start-up waits for the first pod list before serving anyway. */
#define DAEMON_SYNC_TIMEOUT_MS 10000
/* How long SIGTERM waits for the sink to deliver what is spooled (the rest stays spooled). */
#define DAEMON_DRAIN_MS 2000

/*
 * Runs the daemon with the config at @config_path (NULL: CONFIG_DEFAULT_PATH) until SIGTERM
 * or SIGINT (or POST /v1/remove). Returns the process exit status: EXIT_SUCCESS after a
 * signal; 2 for a bad config (the message names the file, the line and the key);
 * EXIT_FAILURE when something cannot start (each reason logged). Call once per process, from
 * its only thread.
 */
int daemon_main(const char *config_path);

#endif
