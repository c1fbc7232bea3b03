import Testing

/// Suites that run in real time and load the CPU (a flooding client, the simulator rendering a
/// 886x1920 picture 30 times a second, its executable): one at a time, so none of them starves
/// another of the two cores and the simulator keeps its 30 fps.
@Suite(.serialized) enum RealTimeTests {}
