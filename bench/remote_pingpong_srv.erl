%% Peer of bench/remote_pingpong.sh: a gen_server registered as `echo` answering
%% {'add:', [V]} with a running count, like the bt actor in remote_pingpong_server.bt.
-module(remote_pingpong_srv).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2, run/2]).

start() ->
    {ok, _} = gen_server:start({local, echo}, ?MODULE, 0, []),
    io:format("ready~n").

init(N) -> {ok, N}.
handle_call({'add:', [V]}, _From, N) -> {reply, N + V, N + V}.
handle_cast(_, N) -> {noreply, N}.

%% Client side: N sync calls to {echo, Node}; prints the time per round trip.
run(Node, N) ->
    pong = net_adm:ping(Node),
    gen_server:call({echo, Node}, {'add:', [1]}),
    T0 = erlang:monotonic_time(microsecond),
    loop(Node, N),
    Us = erlang:monotonic_time(microsecond) - T0,
    io:format("TIME ~w~n", [Us / 1000000]),
    halt().

loop(_, 0) -> ok;
loop(Node, K) -> gen_server:call({echo, Node}, {'add:', [1]}), loop(Node, K - 1).
