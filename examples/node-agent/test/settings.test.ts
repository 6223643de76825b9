/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

import { describe, expect, it } from 'vitest';
import { parseSettings } from '../src/settings.js';

describe('parseSettings', () => {
  it('serves secure metrics and probes on the usual ports and watches every namespace by default', () => {
    expect(parseSettings([], {})).toEqual({
      metricsBindAddress: ':8443',
      metricsSecure: true,
      metricsCertPath: undefined,
      enableHttp2: false,
      healthProbeBindAddress: ':8081',
      webhookCertPath: undefined,
      webhookPort: 9443,
      leaderElect: false,
      watchNamespace: undefined,
    });
  });

  it('reads the flags the Deployment passes', () => {
    const settings = parseSettings(['--leader-elect', '--health-probe-bind-address=:9091'], {});
    expect(settings.leaderElect).toBe(true);
    expect(settings.healthProbeBindAddress).toBe(':9091');
  });

  it('serves plain metrics with --metrics-secure=false, and refuses another value', () => {
    expect(parseSettings(['--metrics-secure=false'], {}).metricsSecure).toBe(false);
    expect(() => parseSettings(['--metrics-secure=no'], {})).toThrow(
      '--metrics-secure must be true or false, not "no"',
    );
  });

  it('turns HTTP/2 on for the metrics and webhook servers with --enable-http2', () => {
    expect(parseSettings(['--enable-http2'], {}).enableHttp2).toBe(true);
  });

  it('serves webhooks from --webhook-cert-path on --webhook-port, and refuses a port out of range', () => {
    const settings = parseSettings(['--webhook-cert-path=/certs', '--webhook-port=10250'], {});
    expect(settings.webhookCertPath).toBe('/certs');
    expect(settings.webhookPort).toBe(10250);
    expect(() => parseSettings(['--webhook-port=70000'], {})).toThrow(
      '--webhook-port must be a port number from 1 to 65535, not "70000"',
    );
  });

  it('watches one namespace when WATCH_NAMESPACE is set', () => {
    expect(parseSettings([], { WATCH_NAMESPACE: 'shop' }).watchNamespace).toBe('shop');
  });

  it('refuses an unknown flag', () => {
    expect(() => parseSettings(['--metrics-addr=:8080'], {})).toThrow(/metrics-addr/);
  });
});
