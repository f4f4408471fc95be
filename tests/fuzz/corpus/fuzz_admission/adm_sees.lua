assert(campaign.nb_params == 2)
assert(param(1) == 'a 1' and param(3) == nil and param(0) == nil)
local b = campaign.clusters.beta
assert(b.exec_file == 'run.sh' and b.walltime == 600 and b.resources == '/core=1')
assert(b.checkpointing_signal == 'SIGUSR2' and #b.prologue == 0 and b.temporal_grouping == false)
