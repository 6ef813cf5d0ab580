package io.github.hedge.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.session.Session;
import org.junit.jupiter.api.Test;

/** Proves which driver each surefire execution really ran on (4.17.0, then 4.19.3). */
class DriverVersionTest {
    @Test
    void should_run_on_the_driver_the_build_asked_for_when_tests_run_twice() {
        String expected = System.getProperty("hedge.expectedDriverVersion");
        assertThat(expected).isNotBlank();
        assertThat(Session.OSS_DRIVER_COORDINATES.getVersion().toString()).isEqualTo(expected);
    }
}
