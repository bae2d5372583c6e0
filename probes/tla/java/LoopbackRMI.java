// Runs a TLC distributed-mode main class (tlc2.tool.distributed.TLCServer or TLCWorker)
// with every RMI server socket bound to one address -- 127.0.0.1 by default -- instead
// of all interfaces, so a local server and its workers are reachable from this machine
// only. For workers on other hosts start the server with -Drc.rmi.bind=<its LAN address>
// (and -Djava.rmi.server.hostname=<the same>); see tla/README.md.
//
// Launched with the JDK's single-file source launcher:
//   java -Drc.rmi.bind=127.0.0.1 -cp tla2tools.jar LoopbackRMI.java tlc2.tool.distributed.TLCServer ...
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.server.RMISocketFactory;
import java.util.Arrays;

public class LoopbackRMI {
    public static void main(String[] args) throws Exception {
        final InetAddress bind = InetAddress.getByName(System.getProperty("rc.rmi.bind", "127.0.0.1"));
        RMISocketFactory.setSocketFactory(new RMISocketFactory() {
            @Override
            public ServerSocket createServerSocket(int port) throws IOException {
                return new ServerSocket(port, 50, bind);
            }

            @Override
            public Socket createSocket(String host, int port) throws IOException {
                return new Socket(host, port);
            }
        });
        Class.forName(args[0]).getMethod("main", String[].class)
             .invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    }
}
