package io.github.hedge.http;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.startup.Tomcat;

/**
 * One instance of a service on an embedded Tomcat on 127.0.0.1 that counts what it received. GET
 * /item and POST /orders answer as {@link NettyInstance}'s do; a stalled instance holds each request
 * until {@link #release()} (Tomcat does not notice a closed connection while a servlet waits).
 */
final class TomcatInstance {
    final String name;
    final AtomicInteger received = new AtomicInteger();
    final AtomicInteger posts = new AtomicInteger();
    final AtomicInteger status = new AtomicInteger(200);
    private final AtomicReference<CountDownLatch> stall = new AtomicReference<>(new CountDownLatch(0));
    private final Tomcat tomcat = new Tomcat();

    TomcatInstance(String name) throws IOException, LifecycleException {
        this.name = name;
        File base = Files.createTempDirectory("hedge-http-tomcat").toFile();
        tomcat.setBaseDir(base.getAbsolutePath());
        tomcat.setHostname("127.0.0.1");
        tomcat.setPort(0);
        tomcat.getConnector().setProperty("address", "127.0.0.1");
        Context context = tomcat.addContext("", base.getAbsolutePath());
        Tomcat.addServlet(context, "item", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
                received.incrementAndGet();
                answer(res, name);
            }

            @Override
            protected void doPost(HttpServletRequest req, HttpServletResponse res) throws IOException {
                String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                received.incrementAndGet();
                posts.incrementAndGet();
                answer(res, name + ":" + body);
            }
        });
        context.addServletMappingDecoded("/*", "item");
        tomcat.start();
    }

    private void answer(HttpServletResponse res, String body) throws IOException {
        try {
            stall.get().await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        res.setStatus(status.get());
        res.setHeader("X-Instance", name);
        res.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + tomcat.getConnector().getLocalPort());
    }

    void stallUntilReleased() {
        stall.set(new CountDownLatch(1));
    }

    void release() {
        stall.get().countDown();
    }

    void reset() {
        release();
        stall.set(new CountDownLatch(0));
        received.set(0);
        posts.set(0);
        status.set(200);
    }

    void stop() throws LifecycleException {
        release();
        tomcat.stop();
        tomcat.destroy();
    }
}
