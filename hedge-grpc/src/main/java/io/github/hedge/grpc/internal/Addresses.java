package io.github.hedge.grpc.internal;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * One string per backend, the same whether it comes from the transport (remote address of a
 * stream) or from the balancer (address of a subchannel): "127.0.0.1:50051", "[::1]:443".
 */
public final class Addresses {
    private Addresses() {}

    public static String of(SocketAddress address) {
        if (address instanceof InetSocketAddress) {
            InetSocketAddress a = (InetSocketAddress) address;
            InetAddress ip = a.getAddress();
            String host = ip != null ? ip.getHostAddress() : a.getHostString();
            if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
                host = "[" + host + "]";
            }
            return host + ":" + a.getPort();
        }
        return String.valueOf(address);
    }
}
