#include "ibscope/cli/app.hpp"

int main(int argc, char** argv) { return ibscope::cli::run(argc, argv); }
