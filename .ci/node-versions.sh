# The registry Node versions CI proves, by major line: sourced by .ci/with-node.sh (x64, the
# whole suite) and .ci/arm64-smoke.sh (arm64). The machine's own Node 20 runs the x64 suite; 20
# here is the arm64 binary the smoke run fetches.
NODE_VERSIONS=([20]=20.20.2 [22]=22.23.3 [24]=24.21.0)
