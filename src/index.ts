/**
 * krx-bridge: the server API. Start a bridge with `await createBridge(loadConfig())`;
 * the client SDK is `krx-bridge/client`. See README.md and docs/PROTOCOL.md.
 */
export { Bridge, createBridge, bridgeLogger, type BridgeOptions, type BridgeAddress, type BridgeParts } from './bridge/bridge.js';
export { loadConfig, defaultConfig, ConfigError, SETTINGS, type Config } from './config/config.js';
export { Simulator, type SimulatorOptions } from './sim/index.js';
export { UpstreamClient, UpstreamError, Budget, CATALOGUE, endpoint } from './upstream/index.js';
export type { Endpoint, UpstreamResult, Row, Scalar } from './upstream/index.js';
export * as protocol from './protocol/index.js';
